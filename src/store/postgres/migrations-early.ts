/**
 * The first PostgreSQL migration (see migrations.ts): the SQLite schema as its first migrations
 * left it, translated. Shipped, so never edited: a change is a new migration at the end of
 * PG_MIGRATIONS.
 */
export const PG_FIRST_MIGRATION: string = `
  CREATE TABLE accounts (
    id          TEXT COLLATE "C" PRIMARY KEY,
    name        TEXT COLLATE "C" NOT NULL UNIQUE,
    balance_usd DOUBLE PRECISION,
    created_at  TEXT COLLATE "C" NOT NULL,
    user_id     TEXT COLLATE "C"
  );
  INSERT INTO accounts (id, name, balance_usd, created_at, user_id)
    VALUES ('local', 'local', NULL, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      '00000000-0000-4000-8000-000000000001');

  CREATE TABLE entities (
    id                  TEXT COLLATE "C" PRIMARY KEY,
    rid                 BIGINT GENERATED ALWAYS AS IDENTITY,
    account_id          TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    name                TEXT COLLATE "C" NOT NULL,
    instructions        TEXT NOT NULL,
    instructions_tokens BIGINT NOT NULL DEFAULT 0,
    model               TEXT NOT NULL,
    state               TEXT NOT NULL DEFAULT 'none',
    budget_tokens       BIGINT NOT NULL,
    cap_tokens          BIGINT NOT NULL,
    transcript_messages BIGINT NOT NULL DEFAULT 0,
    transcript_tokens   BIGINT NOT NULL DEFAULT 0,
    window_tokens       BIGINT NOT NULL DEFAULT 0,
    window_blocks       BIGINT NOT NULL DEFAULT 0,
    created_at          TEXT COLLATE "C" NOT NULL,
    updated_at          TEXT COLLATE "C" NOT NULL
  );
  CREATE INDEX entities_by_activity ON entities (account_id, updated_at DESC, rid DESC);

  CREATE TABLE messages (
    entity_id  TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    tokens     BIGINT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (entity_id, seq)
  );

  CREATE TABLE blocks (
    id          TEXT COLLATE "C" PRIMARY KEY,
    entity_id   TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    position    BIGINT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('summary', 'message')),
    role        TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content     TEXT NOT NULL,
    tokens      BIGINT NOT NULL,
    covers_from BIGINT NOT NULL,
    covers_to   BIGINT NOT NULL,
    UNIQUE (entity_id, position)
  );

  -- One writer per entity or universe: "entity:<id>" or "universe:<id>".
  CREATE TABLE turn_leases (
    subject         TEXT COLLATE "C" PRIMARY KEY,
    owner           TEXT COLLATE "C" NOT NULL,
    idempotency_key TEXT,
    content_sha256  TEXT,
    expires_at      BIGINT NOT NULL
  );

  CREATE TABLE idempotency_keys (
    entity_id      TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    key            TEXT COLLATE "C" NOT NULL,
    content_sha256 TEXT NOT NULL,
    completion     TEXT NOT NULL,
    created_at     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (entity_id, key)
  );

  CREATE TABLE ledger (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    entity_id     TEXT COLLATE "C",
    model         TEXT NOT NULL,
    input_tokens  BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cost_usd      DOUBLE PRECISION NOT NULL,
    created_at    TEXT COLLATE "C" NOT NULL
  );
  CREATE INDEX ledger_by_account ON ledger (account_id, id);

  CREATE TABLE universes (
    id                      TEXT COLLATE "C" PRIMARY KEY,
    rid                     BIGINT GENERATED ALWAYS AS IDENTITY,
    user_id                 TEXT COLLATE "C" NOT NULL,
    display_name            TEXT COLLATE "C",
    stored_prompt           TEXT NOT NULL,
    prompt_text             TEXT NOT NULL,
    response_format         TEXT,
    additional_instructions TEXT,
    prompt_fingerprint      TEXT NOT NULL,
    messages                BIGINT NOT NULL DEFAULT 0,
    created_at              TEXT COLLATE "C" NOT NULL,
    updated_at              TEXT COLLATE "C" NOT NULL
  );
  CREATE INDEX universes_by_user ON universes (user_id, updated_at DESC, rid DESC);

  CREATE TABLE universe_messages (
    universe_id  TEXT COLLATE "C" NOT NULL REFERENCES universes(id) ON DELETE CASCADE,
    seq          BIGINT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content      TEXT,
    tool_calls   TEXT,
    tool_call_id TEXT,
    tool_name    TEXT,
    tool_ok      BIGINT,
    created_at   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (universe_id, seq)
  );

  CREATE TABLE universe_requests (
    user_id     TEXT COLLATE "C" NOT NULL,
    request_id  TEXT COLLATE "C" NOT NULL,
    universe_id TEXT COLLATE "C",
    status      TEXT NOT NULL CHECK (status IN ('pending', 'failed', 'done')),
    user_seq    BIGINT,
    response    TEXT,
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, request_id)
  );

  CREATE TABLE generation_logs (
    id               TEXT COLLATE "C" PRIMARY KEY,
    rid              BIGINT GENERATED ALWAYS AS IDENTITY,
    kind             TEXT NOT NULL CHECK (kind IN ('text', 'image')),
    owner_user_id    TEXT COLLATE "C" NOT NULL,
    user_id          TEXT COLLATE "C" NOT NULL,
    game_id          TEXT COLLATE "C",
    universe_id      TEXT COLLATE "C",
    request_id       TEXT COLLATE "C",
    model            TEXT NOT NULL,
    provider_model   TEXT,
    status           TEXT NOT NULL,
    error            TEXT,
    input_tokens     BIGINT NOT NULL DEFAULT 0,
    output_tokens    BIGINT NOT NULL DEFAULT 0,
    cost_usd         DOUBLE PRECISION NOT NULL DEFAULT 0,
    total_ms         BIGINT NOT NULL DEFAULT 0,
    provider_ms      BIGINT NOT NULL DEFAULT 0,
    created_at       TEXT COLLATE "C" NOT NULL,
    request_summary  TEXT NOT NULL,
    response_summary TEXT NOT NULL
  );
  CREATE INDEX logs_by_owner ON generation_logs (owner_user_id, created_at DESC, rid DESC);

  -- API keys: mgpt_live_<public>.<secret>; only the secret's sha256 is kept.
  CREATE TABLE api_keys (
    id            TEXT COLLATE "C" PRIMARY KEY,
    account_id    TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    public_id     TEXT COLLATE "C" NOT NULL UNIQUE,
    secret_sha256 TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    created_at    TEXT COLLATE "C" NOT NULL,
    revoked_at    TEXT COLLATE "C"
  );

  CREATE TABLE route_calibration (
    route_key      TEXT COLLATE "C" PRIMARY KEY,
    factor         DOUBLE PRECISION NOT NULL,
    samples        BIGINT NOT NULL,
    context_tokens BIGINT,
    updated_at     TEXT COLLATE "C" NOT NULL
  );

  -- Deleting an entity or universe drops its lease, as SQLite's triggers do.
  CREATE FUNCTION mgpt_drop_lease() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM turn_leases WHERE subject = TG_ARGV[0] || ':' || OLD.id;
    RETURN OLD;
  END $$;
  CREATE TRIGGER entity_lease_gone AFTER DELETE ON entities
    FOR EACH ROW EXECUTE FUNCTION mgpt_drop_lease('entity');
  CREATE TRIGGER universe_lease_gone AFTER DELETE ON universes
    FOR EACH ROW EXECUTE FUNCTION mgpt_drop_lease('universe');
  `;
