import { EARLY_MIGRATIONS } from './migrations-early.js';

/**
 * Append-only schema migrations. Never edit a shipped entry: add a new one. The applied count is
 * kept in `PRAGMA user_version`, and each migration runs in its own transaction.
 */
export const MIGRATIONS: readonly string[] = [
  ...EARLY_MIGRATIONS,
  `
  -- Where a learned context came from: 'server' (the overflow answer named it), 'estimate' (it did
  -- not), or 'shared' (a server whose context is shared between parallel requests ran out).
  ALTER TABLE route_calibration ADD COLUMN context_source TEXT;
  `,
  `
  -- Search (mgpt search): the transcript gets an integer key, so an FTS5 index can keep no copy of
  -- the text of its own (external content); triggers keep the index in the same transaction as
  -- every insert and delete, an entity's deletion included (its cascade fires them).
  CREATE TABLE messages_v2 (
    id         INTEGER PRIMARY KEY,
    entity_id  TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (entity_id, seq)
  );
  INSERT INTO messages_v2 (entity_id, seq, role, content, tokens, created_at)
    SELECT entity_id, seq, role, content, tokens, created_at FROM messages ORDER BY entity_id, seq;
  DROP TABLE messages;
  ALTER TABLE messages_v2 RENAME TO messages;
  CREATE VIRTUAL TABLE messages_search USING fts5(content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 0');
  INSERT INTO messages_search (messages_search) VALUES ('rebuild');
  CREATE TRIGGER messages_search_insert AFTER INSERT ON messages
    BEGIN INSERT INTO messages_search (rowid, content) VALUES (new.id, new.content); END;
  CREATE TRIGGER messages_search_delete AFTER DELETE ON messages
    BEGIN INSERT INTO messages_search (messages_search, rowid, content) VALUES ('delete', old.id, old.content); END;
  CREATE TRIGGER messages_search_update AFTER UPDATE OF content ON messages
    BEGIN
      INSERT INTO messages_search (messages_search, rowid, content) VALUES ('delete', old.id, old.content);
      INSERT INTO messages_search (rowid, content) VALUES (new.id, new.content);
    END;
  `,
  `
  -- Recall: an entity whose model is offered the recall tool over its own transcript.
  ALTER TABLE entities ADD COLUMN recall INTEGER NOT NULL DEFAULT 0 CHECK (recall IN (0, 1));
  `,
  `
  -- Search over universe conversations and generation logs: mgpt search --universes, --logs. A
  -- universe's messages get an integer key for an FTS5 index with no copy of their text; truncating
  -- a universe (a statePointer) deletes its rows, and the triggers take them out of the index. A
  -- log's searchable text (what was asked and what was answered, from its JSON summaries) goes into
  -- a contentless index: logs are never deleted.
  CREATE TABLE universe_messages_v2 (
    id           INTEGER PRIMARY KEY,
    universe_id  TEXT NOT NULL REFERENCES universes(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    content      TEXT,
    tool_calls   TEXT,
    tool_call_id TEXT,
    tool_name    TEXT,
    tool_ok      INTEGER,
    created_at   TEXT NOT NULL,
    UNIQUE (universe_id, seq)
  );
  INSERT INTO universe_messages_v2 (universe_id, seq, role, content, tool_calls, tool_call_id, tool_name, tool_ok, created_at)
    SELECT universe_id, seq, role, content, tool_calls, tool_call_id, tool_name, tool_ok, created_at FROM universe_messages ORDER BY universe_id, seq;
  DROP TABLE universe_messages;
  ALTER TABLE universe_messages_v2 RENAME TO universe_messages;
  CREATE VIRTUAL TABLE universe_messages_search USING fts5(content, content='universe_messages', content_rowid='id', tokenize='unicode61 remove_diacritics 0');
  INSERT INTO universe_messages_search (universe_messages_search) VALUES ('rebuild');
  CREATE TRIGGER universe_messages_search_insert AFTER INSERT ON universe_messages
    BEGIN INSERT INTO universe_messages_search (rowid, content) VALUES (new.id, new.content); END;
  CREATE TRIGGER universe_messages_search_delete AFTER DELETE ON universe_messages
    BEGIN INSERT INTO universe_messages_search (universe_messages_search, rowid, content) VALUES ('delete', old.id, old.content); END;
  CREATE TRIGGER universe_messages_search_update AFTER UPDATE OF content ON universe_messages
    BEGIN
      INSERT INTO universe_messages_search (universe_messages_search, rowid, content) VALUES ('delete', old.id, old.content);
      INSERT INTO universe_messages_search (rowid, content) VALUES (new.id, new.content);
    END;
  CREATE VIRTUAL TABLE generation_logs_search USING fts5(text, content='', tokenize='unicode61 remove_diacritics 0');
  INSERT INTO generation_logs_search (rowid, text)
    SELECT rowid, coalesce(json_extract(request_summary, '$.userInput'), '') || ' ' || coalesce(json_extract(response_summary, '$.assistantRaw'), '')
    FROM generation_logs;
  CREATE TRIGGER generation_logs_search_insert AFTER INSERT ON generation_logs
    BEGIN
      INSERT INTO generation_logs_search (rowid, text)
        VALUES (new.rowid, coalesce(json_extract(new.request_summary, '$.userInput'), '') || ' ' || coalesce(json_extract(new.response_summary, '$.assistantRaw'), ''));
    END;
  `,
  `
  -- Rate limits: requests and tokens per minute of a key, or an account's default for
  -- its keys; NULL is none. A key's state is one row of theoretical arrival times (a generic cell
  -- rate algorithm) in epoch milliseconds, admitted or refused by one conditional upsert.
  ALTER TABLE accounts ADD COLUMN rpm INTEGER CHECK (rpm > 0);
  ALTER TABLE accounts ADD COLUMN tpm INTEGER CHECK (tpm > 0);
  ALTER TABLE api_keys ADD COLUMN rpm INTEGER CHECK (rpm > 0);
  ALTER TABLE api_keys ADD COLUMN tpm INTEGER CHECK (tpm > 0);
  CREATE TABLE rate_state (
    key_id      TEXT PRIMARY KEY REFERENCES api_keys(id),
    request_tat REAL NOT NULL,
    token_tat   REAL NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  -- Ranked recall: the transcript indexed again with stemming (porter), so any word of a
  -- question finds the messages that share its stem, ranked by bm25 (recall, mgpt search --any); the
  -- every-word index stays as it is. An entity's recall mode: 0 off, 1 the recall tool, 2 automatic.
  CREATE VIRTUAL TABLE messages_ranked USING fts5(content, content='messages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
  INSERT INTO messages_ranked (messages_ranked) VALUES ('rebuild');
  CREATE TRIGGER messages_ranked_insert AFTER INSERT ON messages
    BEGIN INSERT INTO messages_ranked (rowid, content) VALUES (new.id, new.content); END;
  CREATE TRIGGER messages_ranked_delete AFTER DELETE ON messages
    BEGIN INSERT INTO messages_ranked (messages_ranked, rowid, content) VALUES ('delete', old.id, old.content); END;
  CREATE TRIGGER messages_ranked_update AFTER UPDATE OF content ON messages
    BEGIN
      INSERT INTO messages_ranked (messages_ranked, rowid, content) VALUES ('delete', old.id, old.content);
      INSERT INTO messages_ranked (rowid, content) VALUES (new.id, new.content);
    END;
  ALTER TABLE entities ADD COLUMN recall_mode INTEGER NOT NULL DEFAULT 0 CHECK (recall_mode IN (0, 1, 2));
  UPDATE entities SET recall_mode = recall;
  `,
  `
  -- Window history: every rotation with its span, summary, route, usage and the window
  -- before and after (blocks by reference: summaries by the rotation that wrote them, messages as
  -- seq ranges); and for each turn what its prompt was made of: a head stored once per entity by
  -- its hash (a turn's record is keyed by its head, which names the entity: no entity id a turn),
  -- the window's block refs and whatever came between the window and the message.
  CREATE TABLE rotations (
    entity_id         TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    n                 INTEGER NOT NULL,
    id                TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    trigger           TEXT NOT NULL CHECK (trigger IN ('turn', 'manual', 'resummarize')),
    seq               INTEGER,
    from_seq          INTEGER NOT NULL,
    to_seq            INTEGER NOT NULL,
    summary_id        TEXT NOT NULL,
    covers_from       INTEGER NOT NULL,
    summary_text      TEXT NOT NULL,
    summary_tokens    INTEGER NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    cached_tokens     INTEGER,
    completion_tokens INTEGER NOT NULL,
    blocks_before     TEXT NOT NULL,
    blocks_after      TEXT NOT NULL,
    folded_ids        TEXT NOT NULL,
    undone            INTEGER NOT NULL DEFAULT 0 CHECK (undone IN (0, 1)),
    UNIQUE (entity_id, n)
  );
  CREATE INDEX rotations_summary ON rotations (entity_id, summary_id);
  CREATE TABLE prompt_heads (
    id        INTEGER PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    sha256    TEXT NOT NULL,
    messages  TEXT NOT NULL,
    UNIQUE (entity_id, sha256)
  );
  CREATE TABLE turn_windows (
    head_id INTEGER NOT NULL REFERENCES prompt_heads(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    blocks  TEXT NOT NULL,
    tail    TEXT,
    PRIMARY KEY (head_id, seq)
  ) WITHOUT ROWID;
  `,
  `
  -- Pinned memory: an entity's labelled text blocks, shown to its model right after the
  -- instructions and never rotated, and every change to them with its text before and after and
  -- who made it (the user, or the model through its remember tool).
  CREATE TABLE memory_blocks (
    entity_id  TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    label      TEXT NOT NULL,
    text       TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (entity_id, label)
  ) WITHOUT ROWID;
  CREATE TABLE memory_history (
    id          INTEGER PRIMARY KEY,
    entity_id   TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    label       TEXT NOT NULL,
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
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    source          TEXT NOT NULL,
    source_id       TEXT NOT NULL,
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    last_message_id TEXT NOT NULL,
    source_messages INTEGER NOT NULL,
    imported_at     TEXT NOT NULL,
    PRIMARY KEY (account_id, source, source_id)
  ) WITHOUT ROWID;
  CREATE INDEX import_sources_by_entity ON import_sources (entity_id);
  `,
  `
  -- Stored prompts in the database: every process and replica on it creates universes
  -- from one set. A removed prompt keeps its row with no text, so a prompts directory's file of
  -- that name is not imported again.
  CREATE TABLE stored_prompts (
    name                    TEXT PRIMARY KEY,
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
  ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
  `,
  `
  -- The OpenAI Responses and Conversations facade: each response names an entity turn
  -- (or the tool round it opened) and keeps the object its routes return; a conversation is an
  -- entity, with metadata, the items added that do not make a whole turn yet (held until they do),
  -- and a tombstone once deleted. Both go with their entity.
  CREATE TABLE openai_responses (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    root_entity_id  TEXT NOT NULL,
    after_seq       INTEGER NOT NULL,
    reply_seq       INTEGER,
    idempotency_key TEXT,
    body            TEXT NOT NULL,
    input           TEXT NOT NULL,
    pending         TEXT,
    created_at      TEXT NOT NULL
  );
  CREATE INDEX openai_responses_by_entity ON openai_responses (entity_id, created_at);
  CREATE TABLE openai_conversations (
    entity_id  TEXT PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
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
  CREATE TABLE import_sources_v2 (
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    source          TEXT NOT NULL,
    source_id       TEXT NOT NULL,
    target          TEXT NOT NULL,
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    last_message_id TEXT NOT NULL,
    source_messages INTEGER NOT NULL,
    imported_at     TEXT NOT NULL,
    PRIMARY KEY (account_id, source, source_id, target)
  ) WITHOUT ROWID;
  INSERT INTO import_sources_v2 (account_id, source, source_id, target, entity_id, last_message_id, source_messages, imported_at)
    SELECT account_id, source, source_id,
      CASE WHEN (SELECT count(*) FROM import_sources o WHERE o.entity_id = s.entity_id) > 1 THEN entity_id ELSE '' END,
      entity_id, last_message_id, source_messages, imported_at
    FROM import_sources s;
  DROP TABLE import_sources;
  ALTER TABLE import_sources_v2 RENAME TO import_sources;
  CREATE INDEX import_sources_by_entity ON import_sources (entity_id);
  `,
  `
  -- An import's fold is a rotation too (trigger 'import'): rotations lists it and rotate --undo
  -- takes it back. SQLite cannot change a CHECK in place: the table is copied.
  CREATE TABLE rotations_v2 (
    entity_id         TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    n                 INTEGER NOT NULL,
    id                TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    trigger           TEXT NOT NULL CHECK (trigger IN ('turn', 'manual', 'resummarize', 'import')),
    seq               INTEGER,
    from_seq          INTEGER NOT NULL,
    to_seq            INTEGER NOT NULL,
    summary_id        TEXT NOT NULL,
    covers_from       INTEGER NOT NULL,
    summary_text      TEXT NOT NULL,
    summary_tokens    INTEGER NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    cached_tokens     INTEGER,
    completion_tokens INTEGER NOT NULL,
    blocks_before     TEXT NOT NULL,
    blocks_after      TEXT NOT NULL,
    folded_ids        TEXT NOT NULL,
    undone            INTEGER NOT NULL DEFAULT 0 CHECK (undone IN (0, 1)),
    UNIQUE (entity_id, n)
  );
  INSERT INTO rotations_v2 (entity_id, n, id, created_at, trigger, seq, from_seq, to_seq, summary_id, covers_from, summary_text, summary_tokens, provider, model, prompt_tokens, cached_tokens, completion_tokens, blocks_before, blocks_after, folded_ids, undone)
    SELECT entity_id, n, id, created_at, trigger, seq, from_seq, to_seq, summary_id, covers_from, summary_text, summary_tokens, provider, model, prompt_tokens, cached_tokens, completion_tokens, blocks_before, blocks_after, folded_ids, undone FROM rotations;
  DROP TABLE rotations;
  ALTER TABLE rotations_v2 RENAME TO rotations;
  CREATE INDEX rotations_summary ON rotations (entity_id, summary_id);
  `,
  `
  -- The most recalled lines one turn adds to an entity's prompt, in tokens; NULL takes
  -- the default (the smaller of engine.recallTokens and half the budget).
  ALTER TABLE entities ADD COLUMN recall_tokens INTEGER CHECK (recall_tokens IS NULL OR recall_tokens > 0);
  `,
  `
  -- The API key each charge was made with: usage sums by it. NULL for the local backend's own
  -- use, which has no key, and for charges made before keys were recorded.
  ALTER TABLE ledger ADD COLUMN key_id TEXT;
  `,
  `
  -- The memory tool as an entity setting: 1, every turn offers the model remember; a send can
  -- still turn it on or off for itself.
  ALTER TABLE entities ADD COLUMN memory_tool INTEGER NOT NULL DEFAULT 0 CHECK (memory_tool IN (0, 1));
  `,
  `
  -- Semantic recall: a message's vector from the embedding model its entity's route names (float32s,
  -- little-endian), one per message; a put from another model replaces it, so a model change embeds
  -- again. Written after the turn commits, never in its transaction; the entity's deletion takes them.
  CREATE TABLE message_vectors (
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    model     TEXT NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (entity_id, seq)
  ) WITHOUT ROWID;
  -- Whether a copy held in memory is whole is a count by entity and model: from this index alone,
  -- not from rows that carry their vectors.
  CREATE INDEX message_vectors_by_model ON message_vectors (entity_id, model);
  `,
];
