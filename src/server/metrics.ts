import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Engine } from '../engine/engine.js';
import type { EngineEvents } from '../engine/events.js';
import type { RequestRecord } from './request-log.js';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * `GET /metrics` in Prometheus' text format (prom-client): what this process served and what its
 * engine did, since it started. No label names an account, a key, an entity or a universe.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  private readonly http = new Counter({ name: 'mgpt_http_requests_total', help: 'HTTP requests answered, by route as registered and status', labelNames: ['route', 'status'], registers: [this.registry] });
  private readonly turns = new Counter({ name: 'mgpt_turns_total', help: 'Generations completed: entity turns, universe turns, turns and completions through the OpenAI facade, side requests', labelNames: ['kind'], registers: [this.registry] });
  // One series each (every kind of generation): mgpt_turns_total has the kinds.
  private readonly duration = new Histogram({ name: 'mgpt_turn_duration_seconds', help: 'A completed generation, from its start to its commit', buckets: SECONDS, registers: [this.registry] });
  private readonly firstToken = new Histogram({ name: 'mgpt_first_token_seconds', help: 'From a generation\'s start to its first text', buckets: SECONDS, registers: [this.registry] });
  private readonly rotations = new Counter({ name: 'mgpt_rotations_total', help: 'Window rotations committed with their turns', registers: [this.registry] });
  private readonly summaries = new Counter({ name: 'mgpt_summary_requests_total', help: 'Requests rotations made to summarize', registers: [this.registry] });
  private readonly providerErrors = new Counter({ name: 'mgpt_provider_errors_total', help: 'Provider calls that failed, by class', labelNames: ['class'], registers: [this.registry] });
  private readonly conflicts = new Counter({ name: 'mgpt_lease_conflicts_total', help: 'Turns refused because another held the entity or universe (409)', registers: [this.registry] });
  private readonly promptTokens = new Counter({ name: 'mgpt_prompt_tokens_total', help: 'Prompt tokens sent to providers, by whether the provider said its cache served them', labelNames: ['cached'], registers: [this.registry] });
  private readonly rateLimited = new Counter({ name: 'mgpt_rate_limited_total', help: 'Requests refused (429) by their key\'s requests or tokens per minute, by the limit that refused them', labelNames: ['limit'], registers: [this.registry] });
  private readonly recallTurns = new Counter({ name: 'mgpt_recall_turns_total', help: 'Committed entity turns that automatic recall added earlier messages to', registers: [this.registry] });
  private readonly recalledMessages = new Counter({ name: 'mgpt_recalled_messages_total', help: 'Earlier messages automatic recall added to committed turns\' prompts', registers: [this.registry] });
  private readonly recalledTokens = new Counter({ name: 'mgpt_recalled_tokens_total', help: 'Estimated tokens automatic recall added to committed turns\' prompts', registers: [this.registry] });
  private readonly embedded = new Counter({ name: 'mgpt_embeddings_total', help: 'Messages semantic recall embedded and stored, and messages or questions the provider failed to embed (recall then ranked by words alone), by outcome', labelNames: ['outcome'], registers: [this.registry] });
  private readonly streams = new Gauge({ name: 'mgpt_streams_in_flight', help: 'Streamed replies being sent now', registers: [this.registry] });

  /** What the engine tells, counted. */
  readonly events: EngineEvents = {
    turn: (kind, seconds, first) => {
      this.turns.inc({ kind });
      this.duration.observe(seconds);
      if (first !== undefined) this.firstToken.observe(first);
    },
    rotation: () => this.rotations.inc(),
    summaryRequests: (n) => this.summaries.inc(n),
    providerError: (cls) => this.providerErrors.inc({ class: cls }),
    leaseConflict: () => this.conflicts.inc(),
    promptTokens: (total, cached) => {
      this.promptTokens.inc({ cached: 'true' }, cached ?? 0);
      this.promptTokens.inc({ cached: 'false' }, Math.max(0, total - (cached ?? 0)));
    },
    rateLimited: (limit) => this.rateLimited.inc({ limit }),
    recalled: (messages, tokens) => {
      this.recallTurns.inc();
      this.recalledMessages.inc(messages);
      this.recalledTokens.inc(tokens);
    },
    embeddings: (outcome, messages) => this.embedded.inc({ outcome }, messages),
  };

  constructor(engine: Engine) {
    const pool = poolOf(engine);
    if (!pool) return;
    const registry = this.registry;
    new Gauge({
      name: 'mgpt_db_pool_clients', help: 'PostgreSQL connections of this process: in use, and requests waiting for one', labelNames: ['state'], registers: [registry],
      collect() {
        this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }

  /** A request answered (see request-log.ts); a path no route matched is one label, not one per path. */
  request(r: RequestRecord, matched: boolean): void {
    this.http.inc({ route: matched ? r.route : '(unmatched)', status: String(r.status) });
  }

  /** A streamed reply started (+1) or ended (-1). */
  stream(delta: 1 | -1): void {
    this.streams.inc(delta);
  }
}

interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** The PostgreSQL store's pool, when the engine has one. */
function poolOf(engine: Engine): PoolCounts | undefined {
  if (engine.store.kind !== 'postgres') return undefined;
  return (engine.store as unknown as { pool: PoolCounts }).pool;
}
