import { ContextOverflowError } from '../../core/errors.js';
import type { ModelLimit } from '../../core/window-plan.js';
import type { ChatMessage, ChatModel } from '../../providers/spec.js';
import type { CalibrationRow } from '../../store/types.js';
import type { Store } from '../../store/types.js';
import type { Clock } from '../support/clock.js';
import { ServerLayouts, shareSlots } from './server-layouts.js';

/** Tokens a chat template adds around each message (role markers), and once per prompt. */
export const PER_MESSAGE_TOKENS = 4;
export const PER_PROMPT_TOKENS = 3;
/** The share of the context a prompt and its reply may use: estimates vary from turn to turn. */
export const CONTEXT_MARGIN = 0.95;
const FACTOR_MIN = 0.25;
const FACTOR_MAX = 8;
/** How much a lower reading moves the factor down; a higher one moves it up at once. */
const SMOOTHING = 0.2;

/** What a turn may send to the model behind a route. */
export interface RouteFit {
  /** The model's prompt tokens per estimated token. */
  factor: number;
  /** The context a request is planned for in the model's tokens, configured or learned (a slot's share of a shared one); undefined while unknown. */
  contextTokens?: number;
  /** Room kept for the reply, in the model's tokens. */
  reserveTokens: number;
  /** The window's limit in estimated tokens for this prompt's other parts; none while the context is unknown. */
  limit?: ModelLimit;
  /**
   * The context was learned from a server that named it (not configured): a turn that would
   * rotate only for it first tries the server once more, so a server restarted with a larger
   * context is used (a refusal costs the server a tokenization, and teaches the same value again).
   */
  retest?: boolean;
  /**
   * The longest reply to ask for when the route sets none: on a context shared by parallel requests
   * (a server that ran out of it while they ran), an unbounded reply is what fills it.
   */
  replyCap?: number;
  /**
   * The context is shared by the server's slots, and `contextTokens` is one slot's share of it:
   * the whole context and how many slots it is cut for.
   */
  share?: { contextTokens: number; slots: number };
}

/** The first wait after a refused probe of a route's context; each refusal doubles it, up to a day. */
const PROBE_BACKOFF_MS = 5 * 60_000;
const PROBE_BACKOFF_MAX_MS = 24 * 3600_000;

/** The reply cap on a shared context whose size is unknown. */
export const SHARED_REPLY_CAP = 256;

/** What of a chat message a token count covers: its text, and an assistant's tool calls as sent. */
export function messageText(m: ChatMessage): string {
  const text = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
  return m.role === 'assistant' && m.tool_calls ? text + JSON.stringify(m.tool_calls) : text;
}

/** The estimate of a prompt: its messages' counts plus the template's framing. */
export function promptEstimate(messageTokens: readonly number[]): number {
  let t = 0;
  for (const m of messageTokens) t += m;
  return promptEstimateOf(t, messageTokens.length);
}

/** The same from the messages' summed counts and their number. */
export function promptEstimateOf(tokens: number, messages: number): number {
  return PER_PROMPT_TOKENS + tokens + PER_MESSAGE_TOKENS * messages;
}

/**
 * Per-route calibration (docs/design.md#route-limits-and-calibration): the factor between what the model counts and what the
 * estimator counts, learned from the provider's `prompt_tokens`, and the context learned from
 * overflow answers. Kept in the store, so a new process fits the first time.
 */
export class RouteCalibration {
  private readonly rows = new Map<string, CalibrationRow>();
  /** When each route's context may be probed again, and the wait that set it (this process's). */
  private readonly probes = new Map<string, { after: number; waitMs: number }>();
  /** What the servers of shared routes said of their slots (this process's). */
  private readonly layouts: ServerLayouts;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.layouts = new ServerLayouts(clock);
  }

  /**
   * How a prompt whose fixed part (system messages outside the window) is `fixedTokens` estimated
   * tokens in `fixedMessages` messages fits the model: the window's limit in estimated tokens. On a
   * context its server's slots share, a turn is planned for its share (the context / the slots), the
   * same on every turn whatever the other requests hold, so every slot can work.
   */
  async fit(model: ChatModel, fixedTokens: number, fixedMessages: number): Promise<RouteFit> {
    const row = await this.row(model.routeKey);
    const shared = sharesContext(row, model);
    const slots = shared ? await this.slots(model, row) : 1;
    // A configured context wins: the person said what the model holds.
    const configured = model.limits.contextSize;
    const whole = configured ?? row.contextTokens ?? undefined;
    const factor = row.factor;
    const capped = shared && model.limits.maxTokens === undefined;
    if (whole === undefined) return { factor, reserveTokens: model.limits.maxTokens ?? 0, ...(capped ? { replyCap: SHARED_REPLY_CAP } : {}) };
    const contextTokens = Math.floor(whole / slots);
    // A shared route's server is asked once per process (slots()); a probe past a share would pass.
    const retest = !shared && configured === undefined && row.contextSource === 'server';
    const reserveTokens = Math.min(model.limits.maxTokens ?? Math.floor(contextTokens / 4), Math.floor(contextTokens / 2));
    const usable = Math.floor(contextTokens * CONTEXT_MARGIN) - reserveTokens;
    const fixed = fixedMessages > 0 ? fixedTokens + PER_MESSAGE_TOKENS * fixedMessages : 0;
    const cap = Math.floor(usable / factor) - fixed - PER_PROMPT_TOKENS;
    return {
      factor, contextTokens, reserveTokens, limit: { cap, perBlock: PER_MESSAGE_TOKENS }, retest,
      ...(slots > 1 ? { share: { contextTokens: whole, slots } } : {}), ...(capped ? { replyCap: reserveTokens } : {}),
    };
  }

  /**
   * The slots a shared route's context is cut into: configured, else what its server reports (asked
   * once per process). The context the server reports is kept as the route's when none is
   * configured, so a shared route knows its size before a prompt overflows it.
   */
  private async slots(model: ChatModel, row: CalibrationRow): Promise<number> {
    const configured = model.limits.sharedSlots;
    if (configured !== undefined && model.limits.contextSize !== undefined) return configured;
    const reported = await this.layouts.of(model, async (layout) => {
      if (model.limits.contextSize !== undefined || row.contextTokens === layout.contextTokens) return;
      row.contextTokens = layout.contextTokens;
      row.contextSource = row.contextSource === 'shared' ? 'shared' : 'server';
      await this.save(row);
    });
    return shareSlots(configured, reported);
  }

  /** Whether the route is known, without waiting, not to share its context (its row is loaded and says so, and no slots are configured). */
  knownUnshared(model: Pick<ChatModel, 'routeKey' | 'limits'>): boolean {
    const row = this.rows.get(model.routeKey);
    return row !== undefined && !sharesContext(row, model);
  }

  /** The route's whole context when parallel requests share it (learned from a server that ran out of it, or configured), else undefined. */
  async sharedContext(model: Pick<ChatModel, 'routeKey' | 'limits'>): Promise<{ contextTokens?: number; factor: number } | undefined> {
    const row = this.rows.get(model.routeKey) ?? (await this.row(model.routeKey));
    if (!sharesContext(row, model)) return undefined;
    const whole = model.limits.contextSize ?? row.contextTokens ?? undefined;
    return { factor: row.factor, ...(whole === undefined ? {} : { contextTokens: whole }) };
  }

  /** The provider counted `observed` tokens for a prompt estimated at `estimate`. */
  async observe(routeKey: string, estimate: number, observed: number): Promise<void> {
    if (!(estimate > 0 && observed > 0)) return;
    const row = await this.row(routeKey);
    const ratio = clamp(observed / estimate);
    const factor = row.samples === 0 || ratio > row.factor ? ratio : row.factor * (1 - SMOOTHING) + ratio * SMOOTHING;
    let moved = Math.abs(factor - row.factor) / row.factor > 0.01;
    row.factor = factor;
    // The server took a prompt larger than the context learned from it: it has grown (a restart
    // with a larger -c). Forget the old value; the next refusal names the new one.
    if (row.contextTokens !== null && observed > row.contextTokens) {
      row.contextTokens = null;
      row.contextSource = null;
      moved = true;
    }
    row.samples++;
    if (moved || row.samples <= 3) await this.save(row);
  }

  /**
   * A prompt estimated at `estimate` did not fit. What the answer revealed is kept; without
   * numbers, the context is taken to be well below what was sent.
   */
  async learn(routeKey: string, err: ContextOverflowError, estimate: number, reserveTokens: number): Promise<void> {
    const row = await this.row(routeKey);
    if (err.promptTokens && estimate > 0) {
      row.factor = Math.max(row.factor, clamp(err.promptTokens / estimate));
      row.samples++;
    }
    const sent = Math.ceil(row.factor * estimate) + reserveTokens;
    const learned = learnedContext(row, err, sent);
    row.contextTokens = learned.tokens;
    row.contextSource = learned.source;
    // A context that is known but refused this prompt: the estimate ran low, so raise it.
    if (!err.promptTokens && err.contextTokens !== undefined && sent <= err.contextTokens) {
      row.factor = clamp((row.factor * err.contextTokens) / Math.max(1, sent - reserveTokens) * 1.05);
    }
    await this.save(row);
  }

  /** A probe past the learned context was refused, naming the server's context: keep it (it may have changed). */
  async confirmContext(routeKey: string, contextTokens: number): Promise<void> {
    const row = await this.row(routeKey);
    if (row.contextTokens === contextTokens && row.contextSource === 'server') return;
    row.contextTokens = contextTokens;
    row.contextSource = 'server';
    await this.save(row);
  }

  /**
   * The server reports its context now (llama-server's `/props`): kept as the server's, and true
   * when that changes what was known (the turn then plans again).
   */
  async reported(routeKey: string, contextTokens: number): Promise<boolean> {
    const row = await this.row(routeKey);
    if (row.contextTokens === contextTokens) return false;
    await this.confirmContext(routeKey, contextTokens);
    return true;
  }

  /** Whether a probe of the route's context may be sent now: the first may, later ones after a backoff. */
  mayProbe(routeKey: string): boolean {
    const b = this.probes.get(routeKey);
    return !b || this.clock.now() >= b.after;
  }

  /** A probe was answered: a refusal doubles the wait before the next (from PROBE_BACKOFF_MS, up to a day); a context that grew resets it. */
  probed(routeKey: string, grew: boolean): void {
    if (grew) return void this.probes.delete(routeKey);
    const wait = Math.min((this.probes.get(routeKey)?.waitMs ?? PROBE_BACKOFF_MS / 2) * 2, PROBE_BACKOFF_MAX_MS);
    this.probes.set(routeKey, { after: this.clock.now() + wait, waitMs: wait });
  }

  /** The server took more than the context learned from it: forget that value (the next refusal names the new one). */
  async forgetContext(routeKey: string): Promise<void> {
    const row = await this.row(routeKey);
    row.contextTokens = null;
    row.contextSource = null;
    await this.save(row);
  }

  /** What was learned about each route, for `mgpt models`. */
  async list(): Promise<CalibrationRow[]> {
    return this.store.calibration.list();
  }

  /** Forgets what was learned about one route, or about all of them. */
  async reset(routeKey?: string): Promise<number> {
    if (routeKey === undefined) this.rows.clear();
    else this.rows.delete(routeKey);
    this.layouts.forget(routeKey);
    return this.store.calibration.delete(routeKey);
  }

  private async row(routeKey: string): Promise<CalibrationRow> {
    const cached = this.rows.get(routeKey);
    if (cached) return cached;
    const stored = await this.store.calibration.get(routeKey);
    // Another turn may have loaded (and changed) it meanwhile: keep that one.
    let row = this.rows.get(routeKey);
    if (!row) {
      row = stored ?? { routeKey, factor: 1, samples: 0, contextTokens: null, contextSource: null, updatedAt: '' };
      this.rows.set(routeKey, row);
    }
    return row;
  }

  private async save(row: CalibrationRow): Promise<void> {
    row.updatedAt = this.clock.iso();
    try {
      await this.store.calibration.save({ ...row });
    } catch {
      // Another writer holds the file this instant: the next turn saves it.
    }
  }
}

/**
 * The context an overflow teaches. A server that names its context is believed, even above what
 * was learned before (it was restarted larger). A context shared between parallel requests keeps
 * its size and is marked shared. Without a number, the context is taken to be well below what
 * was sent.
 */
function learnedContext(row: CalibrationRow, err: ContextOverflowError, sent: number): { tokens: number | null; source: NonNullable<CalibrationRow['contextSource']> } {
  const below = Math.floor(sent * 0.8);
  const known = row.contextTokens ?? undefined;
  // Parallel requests ran out of a context they share: this prompt fitted, the replies filled it.
  // What is learned is that replies must be bounded (RouteFit.replyCap), not a smaller context.
  if (err.shared) return { tokens: known ?? null, source: 'shared' };
  if (err.contextTokens !== undefined) {
    return { tokens: err.contextTokens, source: row.contextSource === 'shared' ? 'shared' : 'server' };
  }
  return { tokens: minDefined(known, below)!, source: row.contextSource === 'shared' ? 'shared' : 'estimate' };
}

/**
 * Whether the route's parallel requests share one context: its server ran out of it while they ran,
 * or the route is configured with more than one shared slot.
 */
function sharesContext(row: CalibrationRow, model: Pick<ChatModel, 'limits'>): boolean {
  return row.contextSource === 'shared' || (model.limits.sharedSlots ?? 1) > 1;
}

function clamp(f: number): number {
  return Math.min(FACTOR_MAX, Math.max(FACTOR_MIN, f));
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
