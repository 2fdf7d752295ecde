/**
 * The first six of the SQLite migrations (see migrations.ts): accounts, entities and their
 * transcripts, universes and logs, keys, route calibration, leases and completion keys. Shipped,
 * so never edited: a change is a new migration at the end of MIGRATIONS.
 */
export const EARLY_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    balance_usd REAL,
    created_at  TEXT NOT NULL
  );
  INSERT INTO accounts (id, name, balance_usd, created_at)
    VALUES ('local', 'local', NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

  CREATE TABLE entities (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts(id),
    name                TEXT NOT NULL,
    instructions        TEXT NOT NULL,
    instructions_tokens INTEGER NOT NULL DEFAULT 0,
    model               TEXT NOT NULL,
    state               TEXT NOT NULL DEFAULT 'none',
    budget_tokens       INTEGER NOT NULL,
    cap_tokens          INTEGER NOT NULL,
    transcript_messages INTEGER NOT NULL DEFAULT 0,
    transcript_tokens   INTEGER NOT NULL DEFAULT 0,
    window_tokens       INTEGER NOT NULL DEFAULT 0,
    window_blocks       INTEGER NOT NULL DEFAULT 0,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
  );
  CREATE INDEX entities_by_activity ON entities (account_id, updated_at DESC);

  CREATE TABLE messages (
    entity_id  TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (entity_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE blocks (
    id          TEXT PRIMARY KEY,
    entity_id   TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('summary', 'message')),
    role        TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content     TEXT NOT NULL,
    tokens      INTEGER NOT NULL,
    covers_from INTEGER NOT NULL,
    covers_to   INTEGER NOT NULL,
    UNIQUE (entity_id, position)
  );

  CREATE TABLE turn_leases (
    entity_id       TEXT PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    owner           TEXT NOT NULL,
    idempotency_key TEXT,
    content_sha256  TEXT,
    expires_at      INTEGER NOT NULL
  );

  CREATE TABLE idempotency_keys (
    entity_id      TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    key            TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    completion     TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (entity_id, key)
  ) WITHOUT ROWID;

  CREATE TABLE ledger (
    id            INTEGER PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    entity_id     TEXT,
    model         TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_usd      REAL NOT NULL,
    created_at    TEXT NOT NULL
  );
  `,
  `
  CREATE TABLE universes (
    id                      TEXT PRIMARY KEY,
    user_id                 TEXT NOT NULL,
    display_name            TEXT,
    stored_prompt           TEXT NOT NULL,
    prompt_text             TEXT NOT NULL,
    response_format         TEXT,
    additional_instructions TEXT,
    prompt_fingerprint      TEXT NOT NULL,
    messages                INTEGER NOT NULL DEFAULT 0,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL
  );
  CREATE INDEX universes_by_user ON universes (user_id, updated_at DESC);

  -- runtime.conversation: model-facing messages in OpenAI chat shape
  CREATE TABLE universe_messages (
    universe_id  TEXT NOT NULL REFERENCES universes(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content      TEXT,
    tool_calls   TEXT,
    tool_call_id TEXT,
    tool_name    TEXT,
    tool_ok      INTEGER,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (universe_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE universe_requests (
    user_id     TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    universe_id TEXT,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'failed', 'done')),
    user_seq    INTEGER,
    response    TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (user_id, request_id)
  ) WITHOUT ROWID;

  CREATE TABLE generation_logs (
    id               TEXT PRIMARY KEY,
    kind             TEXT NOT NULL CHECK (kind IN ('text', 'image')),
    owner_user_id    TEXT NOT NULL,
    user_id          TEXT NOT NULL,
    game_id          TEXT,
    universe_id      TEXT,
    request_id       TEXT,
    model            TEXT NOT NULL,
    provider_model   TEXT,
    status           TEXT NOT NULL,
    error            TEXT,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_usd         REAL NOT NULL DEFAULT 0,
    total_ms         INTEGER NOT NULL DEFAULT 0,
    provider_ms      INTEGER NOT NULL DEFAULT 0,
    created_at       TEXT NOT NULL,
    request_summary  TEXT NOT NULL,
    response_summary TEXT NOT NULL
  );
  CREATE INDEX logs_by_owner ON generation_logs (owner_user_id, created_at DESC);
  `,
  `
  -- A universe belongs to its owning user: every account has one user id.
  ALTER TABLE accounts ADD COLUMN user_id TEXT;
  UPDATE accounts SET user_id = '00000000-0000-4000-8000-000000000001' WHERE id = 'local';
  UPDATE accounts SET user_id = lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||
    substr(lower(hex(randomblob(2))), 2) || '-8' || substr(lower(hex(randomblob(2))), 2) || '-' ||
    lower(hex(randomblob(6))) WHERE user_id IS NULL;

  -- API keys: mgpt_live_<public>.<secret>; only the secret's sha256 is kept.
  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    public_id     TEXT NOT NULL UNIQUE,
    secret_sha256 TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    revoked_at    TEXT
  );
  `,
  `
  -- What the engine learned about each model behind a route (docs/design.md#route-limits-and-calibration): how its tokens compare
  -- with the estimator's, and the context it revealed when a prompt did not fit.
  CREATE TABLE route_calibration (
    route_key      TEXT PRIMARY KEY,
    factor         REAL NOT NULL,
    samples        INTEGER NOT NULL,
    context_tokens INTEGER,
    updated_at     TEXT NOT NULL
  );
  `,
  `
  -- One writer per entity and per universe (a universe turn numbers its messages like an entity
  -- turn): the lease's key becomes a subject, "entity:<id>" or "universe:<id>". Deleting the
  -- entity or universe still drops its lease, as the old foreign key did.
  CREATE TABLE turn_leases_v2 (
    subject         TEXT PRIMARY KEY,
    owner           TEXT NOT NULL,
    idempotency_key TEXT,
    content_sha256  TEXT,
    expires_at      INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO turn_leases_v2 (subject, owner, idempotency_key, content_sha256, expires_at)
    SELECT 'entity:' || entity_id, owner, idempotency_key, content_sha256, expires_at FROM turn_leases;
  DROP TABLE turn_leases;
  ALTER TABLE turn_leases_v2 RENAME TO turn_leases;
  CREATE TRIGGER entity_lease_gone AFTER DELETE ON entities
    BEGIN DELETE FROM turn_leases WHERE subject = 'entity:' || old.id; END;
  CREATE TRIGGER universe_lease_gone AFTER DELETE ON universes
    BEGIN DELETE FROM turn_leases WHERE subject = 'universe:' || old.id; END;
  `,
  `
  -- Stateless completions (the facade's platform models) by Idempotency-Key, per account: written
  -- with the charge and the log, so a retry replays instead of billing again.
  CREATE TABLE completion_keys (
    account_id     TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key            TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    completion     TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
  ) WITHOUT ROWID;
  `,
];
