import { PG_FIRST_MIGRATION } from './migrations-early.js';

/**
 * Append-only schema migrations for PostgreSQL. Never edit a shipped entry: add a new one. The
 * first entry is the SQLite schema as its five migrations leave it, translated: INTEGER becomes
 * BIGINT (read back as JS numbers), REAL becomes DOUBLE PRECISION, and ids, names and timestamps
 * are TEXT COLLATE "C" so they compare and sort byte by byte as SQLite's do, whatever the
 * database's locale. Where SQLite broke ties on rowid, a `rid` identity column does.
 */
export const PG_MIGRATIONS: readonly string[] = [
  PG_FIRST_MIGRATION,
  `
  -- Stateless completions (the facade's platform models) by Idempotency-Key, per account: written
  -- with the charge and the log, so a retry replays instead of billing again.
  CREATE TABLE completion_keys (
    account_id     TEXT COLLATE "C" NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    key            TEXT COLLATE "C" NOT NULL,
    content_sha256 TEXT COLLATE "C" NOT NULL,
    completion     TEXT NOT NULL,
    created_at     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (account_id, key)
  );
  `,
  `
  -- Where a learned context came from: 'server' (the overflow answer named it), 'estimate' (it did
  -- not), or 'shared' (a server whose context is shared between parallel requests ran out).
  ALTER TABLE route_calibration ADD COLUMN context_source TEXT COLLATE "C";
  `,
  `
  -- Search (mgpt search): each message's words as a tsvector the database keeps with the row (a
  -- generated column, so it is written in the same transaction), under a GIN index. The 'simple'
  -- configuration lower-cases and keeps every word (no stemming, no stop words), as SQLite's FTS5
  -- index does. A tsvector holds at most 1 MB, so only a message's first 100,000 characters are indexed.
  ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('simple', left(content, 100000))) STORED;
  -- fastupdate off: with it on, new rows wait in a pending list that the planner must count as
  -- scanned, so after a burst of turns it chose a sequential scan (5 ms for a word in one message
  -- of 10,000; 0.02 ms once the list is merged). A turn adds two rows: updating in place is cheap.
  CREATE INDEX messages_search ON messages USING GIN (search) WITH (fastupdate = off);
  `,
  `
  -- Recall: an entity whose model is offered the recall tool over its own transcript.
  ALTER TABLE entities ADD COLUMN recall INTEGER NOT NULL DEFAULT 0 CHECK (recall IN (0, 1));
  `,
  `
  -- Search over universe conversations and generation logs: mgpt search --universes, --logs, as
  -- over the transcripts: a generated tsvector under a GIN index without a pending list. A log's
  -- searchable text is what was asked and what was answered, from its JSON summaries.
  ALTER TABLE universe_messages ADD COLUMN search tsvector
    GENERATED ALWAYS AS (to_tsvector('simple', left(coalesce(content, ''), 100000))) STORED;
  CREATE INDEX universe_messages_search ON universe_messages USING GIN (search) WITH (fastupdate = off);
  ALTER TABLE generation_logs ADD COLUMN search tsvector
    GENERATED ALWAYS AS (to_tsvector('simple', left(coalesce(request_summary::jsonb ->> 'userInput', '') || ' ' || coalesce(response_summary::jsonb ->> 'assistantRaw', ''), 100000))) STORED;
  CREATE INDEX generation_logs_search ON generation_logs USING GIN (search) WITH (fastupdate = off);
  `,
  `
  -- Rate limits: requests and tokens per minute of a key, or an account's default for
  -- its keys; NULL is none. A key's state is one row of theoretical arrival times (a generic cell
  -- rate algorithm) in epoch milliseconds on the database's clock, so every replica shares one;
  -- admitted or refused by one conditional upsert, which locks the row it updates.
  ALTER TABLE accounts ADD COLUMN rpm INTEGER CHECK (rpm > 0);
  ALTER TABLE accounts ADD COLUMN tpm INTEGER CHECK (tpm > 0);
  ALTER TABLE api_keys ADD COLUMN rpm INTEGER CHECK (rpm > 0);
  ALTER TABLE api_keys ADD COLUMN tpm INTEGER CHECK (tpm > 0);
  CREATE TABLE rate_state (
    key_id      TEXT COLLATE "C" PRIMARY KEY REFERENCES api_keys(id),
    request_tat DOUBLE PRECISION NOT NULL,
    token_tat   DOUBLE PRECISION NOT NULL
  );
  `,
  `
  -- Ranked recall: each message's words again, stemmed and without stop words (the
  -- english configuration), so any word of a question finds the messages that share its stem,
  -- ranked by ts_rank_cd (recall, mgpt search --any). An entity's recall mode: 0 off, 1 the recall
  -- tool, 2 automatic.
  ALTER TABLE messages ADD COLUMN ranked tsvector GENERATED ALWAYS AS (to_tsvector('english', left(content, 100000))) STORED;
  CREATE INDEX messages_ranked ON messages USING GIN (ranked) WITH (fastupdate = off);
  ALTER TABLE entities ADD COLUMN recall_mode INTEGER NOT NULL DEFAULT 0 CHECK (recall_mode IN (0, 1, 2));
  UPDATE entities SET recall_mode = recall;
  `,
  `
  -- Window history: every rotation with its span, summary, route, usage and the window
  -- before and after (blocks by reference), and for each turn what its prompt was made of (a head
  -- stored once per entity by its hash, which keys the turn's record; the window's block refs,
  -- what came after the window).
  CREATE TABLE rotations (
    entity_id         TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    n                 BIGINT NOT NULL,
    id                TEXT COLLATE "C" NOT NULL,
    created_at        TEXT NOT NULL,
    trigger           TEXT NOT NULL CHECK (trigger IN ('turn', 'manual', 'resummarize')),
    seq               BIGINT,
    from_seq          BIGINT NOT NULL,
    to_seq            BIGINT NOT NULL,
    summary_id        TEXT COLLATE "C" NOT NULL,
    covers_from       BIGINT NOT NULL,
    summary_text      TEXT NOT NULL,
    summary_tokens    BIGINT NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    cached_tokens     BIGINT,
    completion_tokens BIGINT NOT NULL,
    blocks_before     TEXT NOT NULL,
    blocks_after      TEXT NOT NULL,
    folded_ids        TEXT NOT NULL,
    undone            BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (entity_id, n)
  );
  CREATE INDEX rotations_summary ON rotations (entity_id, summary_id);
  CREATE TABLE prompt_heads (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entity_id TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    sha256    TEXT NOT NULL,
    messages  TEXT NOT NULL,
    UNIQUE (entity_id, sha256)
  );
  CREATE TABLE turn_windows (
    head_id BIGINT NOT NULL REFERENCES prompt_heads(id) ON DELETE CASCADE,
    seq     BIGINT NOT NULL,
    blocks  TEXT NOT NULL,
    tail    TEXT,
    PRIMARY KEY (head_id, seq)
  );
  `,
  `
  -- Pinned memory: an entity's labelled text blocks, shown to its model right after the
  -- instructions and never rotated, and every change to them with its text before and after and
  -- who made it (the user, or the model through its remember tool).
  CREATE TABLE memory_blocks (
    entity_id  TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    label      TEXT COLLATE "C" NOT NULL,
    text       TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (entity_id, label)
  );
  CREATE TABLE memory_history (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entity_id   TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    label       TEXT COLLATE "C" NOT NULL,
    text_before TEXT,
    text_after  TEXT,
    source      TEXT NOT NULL CHECK (source IN ('user', 'model')),
    created_at  TEXT NOT NULL
  );
  CREATE INDEX memory_history_by_entity ON memory_history (entity_id, id);
  `,
  `
  -- Imports from other tools: where each imported conversation went, by the tool and
  -- its id, so a re-run skips it and --update appends after its last message. Gone with its entity.
  CREATE TABLE import_sources (
    account_id      TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    source          TEXT COLLATE "C" NOT NULL,
    source_id       TEXT COLLATE "C" NOT NULL,
    entity_id       TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    last_message_id TEXT NOT NULL,
    source_messages INTEGER NOT NULL,
    imported_at     TEXT NOT NULL,
    PRIMARY KEY (account_id, source, source_id)
  );
  CREATE INDEX import_sources_by_entity ON import_sources (entity_id);
  `,
  `
  -- Stored prompts in the database: every process and replica on it creates universes
  -- from one set. A removed prompt keeps its row with no text, so a prompts directory's file of
  -- that name is not imported again.
  CREATE TABLE stored_prompts (
    name                    TEXT COLLATE "C" PRIMARY KEY,
    text                    TEXT,
    response_format         TEXT,
    additional_instructions TEXT,
    source                  TEXT,
    updated_at              TEXT NOT NULL
  );
  `,
  `
  -- Keys that expire on their own (a console session's): a console killed before it could revoke
  -- its key leaves one that stops working within minutes. The console renews it while it runs;
  -- NULL, as for every key made before, never expires.
  ALTER TABLE api_keys ADD COLUMN expires_at TEXT COLLATE "C";
  `,
  `
  -- The OpenAI Responses and Conversations facade: each response names an entity turn
  -- (or the tool round it opened) and keeps the object its routes return; a conversation is an
  -- entity, with metadata, the items added that do not make a whole turn yet (held until they do),
  -- and a tombstone once deleted. Both go with their entity.
  CREATE TABLE openai_responses (
    id              TEXT COLLATE "C" PRIMARY KEY,
    account_id      TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    entity_id       TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    root_entity_id  TEXT COLLATE "C" NOT NULL,
    after_seq       INTEGER NOT NULL,
    reply_seq       INTEGER,
    idempotency_key TEXT COLLATE "C",
    body            TEXT NOT NULL,
    input           TEXT NOT NULL,
    pending         TEXT,
    created_at      TEXT NOT NULL
  );
  CREATE INDEX openai_responses_by_entity ON openai_responses (entity_id, created_at);
  CREATE TABLE openai_conversations (
    entity_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts(id),
    metadata   TEXT NOT NULL,
    held       TEXT NOT NULL,
    deleted_at TEXT,
    created_at TEXT NOT NULL
  );
  `,
  `
  -- Entities by name: an import numbering "New chat (2)", "(3)"… reads the taken names once, by
  -- their shared prefix, instead of scanning the account's entities for each number it tries.
  CREATE INDEX entities_by_name ON entities (account_id, name);
  `,
  `
  -- Where an imported conversation went, per target: its own entity ('') or an --into entity (its
  -- id), so gathering conversations imported one by one into one entity imports them again there,
  -- and a re-run into the same one still skips them. Rows from before: an entity that several
  -- conversations went to was an --into one.
  ALTER TABLE import_sources ADD COLUMN target TEXT COLLATE "C" NOT NULL DEFAULT '';
  UPDATE import_sources SET target = entity_id
    WHERE entity_id IN (SELECT entity_id FROM import_sources GROUP BY entity_id HAVING count(*) > 1);
  ALTER TABLE import_sources ALTER COLUMN target DROP DEFAULT;
  ALTER TABLE import_sources DROP CONSTRAINT import_sources_pkey;
  ALTER TABLE import_sources ADD PRIMARY KEY (account_id, source, source_id, target);
  `,
  `
  -- An import's fold is a rotation too (trigger 'import'): rotations lists it and rotate --undo
  -- takes it back.
  ALTER TABLE rotations DROP CONSTRAINT rotations_trigger_check;
  ALTER TABLE rotations ADD CONSTRAINT rotations_trigger_check CHECK (trigger IN ('turn', 'manual', 'resummarize', 'import'));
  `,
  `
  -- The most recalled lines one turn adds to an entity's prompt, in tokens; NULL takes
  -- the default (the smaller of engine.recallTokens and half the budget).
  ALTER TABLE entities ADD COLUMN recall_tokens INTEGER CHECK (recall_tokens IS NULL OR recall_tokens > 0);
  `,
  `
  -- The API key each charge was made with: usage sums by it. NULL for the local backend's own
  -- use, which has no key, and for charges made before keys were recorded.
  ALTER TABLE ledger ADD COLUMN key_id TEXT COLLATE "C";
  `,
  `
  -- The memory tool as an entity setting: 1, every turn offers the model remember; a send can
  -- still turn it on or off for itself.
  ALTER TABLE entities ADD COLUMN memory_tool INTEGER NOT NULL DEFAULT 0 CHECK (memory_tool IN (0, 1));
  `,
  `
  -- Semantic recall: a message's vector from the embedding model its entity's route names (float32s,
  -- little-endian, in a bytea: no extension needed), one per message; a put from another model
  -- replaces it, so a model change embeds again. The entity's deletion takes them.
  CREATE TABLE message_vectors (
    entity_id TEXT COLLATE "C" NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    seq       BIGINT NOT NULL,
    model     TEXT NOT NULL,
    vector    BYTEA NOT NULL,
    PRIMARY KEY (entity_id, seq)
  );
  -- Whether a copy held in memory is whole is a count by entity and model: from this index alone,
  -- not from rows that carry their vectors.
  CREATE INDEX message_vectors_by_model ON message_vectors (entity_id, model);
  `,
];
