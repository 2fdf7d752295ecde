import { homedir } from 'node:os';
import type { Backend } from '../core/backend.js';
import { cutNotice } from '../core/finish-notice.js';
import { timeAgo } from './time-ago.js';
import { exportItem, historyItem, windowText } from './chat-commands.js';
import { type Completion, type SwitchTarget, complete, wantsTargets } from './completion.js';
import { MAX_TOOL_ROUNDS, type ToolCallOut, type ToolDefinitionInput, type ToolResultInput } from '../core/universe-types.js';

/** What `mgpt chat` talks to. */
export type ChatTarget = { kind: 'entity'; id: string } | { kind: 'universe'; id: string };

export type ChatItem = { id: number } & (
  | { kind: 'user'; text: string }
  /** cancelled: a reply cut short by Ctrl-C, shown as far as it came but not stored. */
  | { kind: 'assistant'; text: string; cancelled?: boolean }
  | { kind: 'notice'; text: string }
  | { kind: 'error'; text: string; hint?: string; exitCode?: number }
  | { kind: 'output'; text: string }
);

export interface ChatStatus {
  kind: 'entity' | 'universe';
  id: string;
  label: string;
  /** The entity's model, or the universe model alias. */
  model?: string;
  backend: string;
  window?: { tokens: number; budget: number; blocks: number };
  transcript?: { messages: number; tokens: number; cap: number };
  readOnly?: boolean;
  /** null or absent: not metered. */
  balanceUsd?: number | null;
}

export interface ChatState {
  items: ChatItem[];
  /** The reply streaming in; null when no turn is running. */
  streaming: string | null;
  busy: boolean;
  status: ChatStatus;
  /** Universe tool calls waiting for the person to type their results, first one next. */
  pendingTools: ToolCallOut[];
  exited: boolean;
}

export interface ChatOptions {
  backend: Backend;
  target: ChatTarget;
  /** Universe turns: the model alias (default game-1-lite-frozen). */
  model?: string;
  tools?: ToolDefinitionInput[];
  /** Runs a universe tool call (`--tool-exec`); without it the person is asked for the result. */
  runTool?: (call: ToolCallOut) => Promise<ToolResultInput>;
  /** The account balance (null when not metered); absent when the backend cannot tell. */
  balance?: () => Promise<number | null>;
  /** Instructions for entities made with `/new`. */
  instructions?: string;
  /** On a terminal: `/history` says when each message was written ("3 min ago"). */
  humanTimes?: boolean;
  /** The clock for humanTimes (default Date.now). */
  now?: () => number;
  /** What `~` in a path means (default: the user's home directory). */
  home?: string;
  /** Shown under the greeting (e.g. that no real model is configured). */
  notices?: string[];
}

export const HELP = [
  '/help              this list',
  '/window            the blocks the model sees now (summaries and live messages)',
  '/history [n]       the last n transcript messages (default 10)',
  '/export [-f] [file] save the transcript (.tar or .json; universes: .json); -f overwrites; ~ is your home',
  '/new [name]        start a new entity (or universe on the same prompt) and switch to it',
  '/switch [ref]      switch to another entity or universe (a name or a 4+ character id prefix); without ref, list them',
  '/exit              leave (Ctrl-D also leaves)',
  'Enter sends; end a line with \\ to continue on the next. Up/Down recall earlier inputs.',
  'Tab completes commands, and names and ids after /switch.',
  'Ctrl-A/E or Home/End: line start/end; Ctrl-B/F: a character back/forward; Alt-B/F: a word back/forward;',
  'Ctrl-W: delete a word back; Ctrl-U/K: delete to the line start/end; Delete: the character under the cursor.',
  'Ctrl-C cancels a reply in flight (what came stays on screen, marked): nothing of that turn is stored.',
  'A line entered during a reply is queued and sent when it ends; Ctrl-D during a reply cancels it, then leaves.',
].join('\n');


/** A thrown value as one line and a hint, whichever bundle's error class it is. */
function describe(err: unknown): { text: string; hint?: string; status?: number; exitCode?: number; details?: Record<string, unknown> } {
  const e = err as { message?: string; hint?: string; status?: number; exitCode?: number; details?: Record<string, unknown> };
  return { text: e?.message ?? String(err), hint: e?.hint, status: e?.status, exitCode: e?.exitCode ?? 1, details: e?.details };
}

function isCancel(err: unknown): boolean {
  const e = err as { name?: string; status?: number };
  return e?.name === 'AbortError' || e?.name === 'CancelledError' || e?.status === 499;
}

/**
 * The REPL's logic without the screen: turns, cancellation, slash commands and status, as a small
 * store the ink component subscribes to. Errors become items; nothing here ends the process.
 */
export class ChatController {
  private state: ChatState;
  private readonly listeners = new Set<() => void>();
  private nextId = 1;
  private turn: AbortController | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private toolResults: ToolResultInput[] = [];
  private toolInput = '';
  private target: ChatTarget;
  /** What `/switch` completes to, read once a session (and again after `/new`). */
  private targets: SwitchTarget[] | null = null;
  /** Lines entered while a reply was coming, sent in order once it ends. */
  private queue: string[] = [];
  private leaving = false;

  constructor(private readonly opts: ChatOptions) {
    this.target = opts.target;
    this.state = {
      items: [],
      streaming: null,
      busy: false,
      status: { kind: opts.target.kind, id: opts.target.id, label: opts.target.id, backend: opts.backend.kind },
      pendingTools: [],
      exited: false,
    };
  }

  getState = (): ChatState => this.state;

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  private set(patch: Partial<ChatState>): void {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn();
  }

  private push(...items: Array<ChatItem extends infer T ? (T extends ChatItem ? Omit<T, 'id'> : never) : never>): void {
    this.set({ items: [...this.state.items, ...items.map((i) => ({ ...i, id: this.nextId++ }) as ChatItem)] });
  }

  /** Loads the status line and greets; an unknown target is an error item, not a crash. */
  async start(): Promise<void> {
    await this.refresh();
    const what = this.target.kind === 'entity' ? 'entity' : 'universe';
    this.push({ kind: 'notice', text: `${what} ${this.state.status.label} on the ${this.opts.backend.kind} backend; /help lists commands, Ctrl-D leaves` });
    for (const text of this.opts.notices ?? []) this.push({ kind: 'notice', text });
  }

  /** Re-reads the status line; failures are shown inline. */
  async refresh(): Promise<void> {
    try {
      const { backend } = this.opts;
      if (this.target.kind === 'entity') {
        const e = await backend.getEntity(this.target.id);
        this.set({
          status: {
            ...this.state.status,
            kind: 'entity',
            id: e.id,
            label: e.name || e.id.slice(0, 8),
            model: e.model,
            window: { tokens: e.window.tokens ?? 0, budget: e.window.budget_tokens, blocks: e.window.blocks ?? 0 },
            transcript: { messages: e.transcript.messages, tokens: e.transcript.tokens, cap: e.transcript.cap_tokens },
            readOnly: e.read_only,
          },
        });
      } else {
        const u = await backend.getUniverse(this.target.id);
        this.set({
          status: {
            kind: 'universe',
            id: u.id,
            backend: backend.kind,
            label: u.displayName || `${u.storedPrompt} ${u.id.slice(0, 8)}`,
            model: this.opts.model ?? 'game-1-lite-frozen',
            transcript: { messages: u.messages, tokens: 0, cap: 0 },
          },
        });
      }
      if (this.opts.balance) this.set({ status: { ...this.state.status, balanceUsd: await this.opts.balance() } });
    } catch (err) {
      this.fail(err);
    }
  }

  /** Enter: a slash command, a tool result the person typed, or a message. */
  async submit(text: string): Promise<void> {
    if (this.state.exited || this.leaving) return;
    // A line entered while a reply streams is not dropped: it waits its turn.
    if (this.state.busy || this.queue.length) {
      this.queue.push(text);
      this.push({ kind: 'notice', text: `queued${this.queue.length > 1 ? ` (${this.queue.length} waiting)` : ''}: sent when the reply ends; Ctrl-C cancels the reply` });
      return;
    }
    await this.run(text);
    while (this.queue.length && !this.state.exited && !this.leaving) await this.run(this.queue.shift()!);
  }

  private run(text: string): Promise<void> {
    const trimmed = text.trim();
    if (trimmed.startsWith('/')) return this.command(trimmed);
    const run = this.state.pendingTools.length
      ? this.answerTool(text)
      : this.target.kind === 'entity' ? this.entityTurn(text) : this.universeTurn(text);
    this.inFlight = run.catch(() => {});
    return run;
  }

  /** Tab: completes a command, or after `/switch ` a name or short id; a failed listing completes nothing. */
  async complete(line: string): Promise<Completion> {
    if (!wantsTargets(line)) return complete(line);
    try {
      this.targets ??= await this.listTargets();
    } catch {
      return complete(line);
    }
    return complete(line, this.targets);
  }

  private async listTargets(): Promise<SwitchTarget[]> {
    const { backend } = this.opts;
    if (this.target.kind === 'entity') return (await backend.listEntities()).data.map((e) => ({ id: e.id, name: e.name }));
    return (await backend.listUniverses()).map((u) => ({ id: u.id, name: u.displayName ?? '' }));
  }

  /** Resolves once the turn in flight, if any, has ended and let go of what it held (its lease). */
  settled(): Promise<void> {
    return this.inFlight;
  }

  /** Ctrl-C: cancels the turn in flight; false when there was none. */
  cancel(): boolean {
    if (!this.turn) return false;
    this.turn.abort();
    return true;
  }

  /** Ctrl-D, /exit, a signal: a reply in flight is cancelled first and its notice shown, then the app leaves. */
  exit(): void {
    this.leaving = true;
    this.queue = [];
    if (this.cancel()) {
      void this.inFlight.then(() => this.set({ exited: true }));
      return;
    }
    this.set({ exited: true });
  }

  private fail(err: unknown): void {
    const d = describe(err);
    if (d.status === 402 && d.details && typeof d.details.balanceUsd === 'number') {
      this.set({ status: { ...this.state.status, balanceUsd: d.details.balanceUsd } });
    }
    this.push({ kind: 'error', text: d.text, hint: d.hint, exitCode: d.exitCode });
  }

  private async entityTurn(content: string): Promise<void> {
    const abort = new AbortController();
    this.turn = abort;
    this.push({ kind: 'user', text: content });
    this.set({ busy: true, streaming: '' });
    let reply = '';
    let cut: string | undefined;
    try {
      for await (const ev of this.opts.backend.sendMessage(this.target.id, { content, signal: abort.signal })) {
        if (abort.signal.aborted) break;
        if (ev.type === 'rotation') {
          this.push({
            kind: 'notice',
            text: `window rotated: messages ${ev.covers[0]}–${ev.covers[1]} were folded into a ${ev.summaryTokens}-token summary (window now ${ev.windowTokens} tokens)`,
          });
        } else if (ev.type === 'delta') {
          reply += ev.text;
          this.set({ streaming: reply });
        } else if (ev.type === 'done') {
          reply = ev.completion.choices[0]?.message.content ?? reply;
          cut = cutNotice(ev.completion);
        }
      }
      if (abort.signal.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError' });
      this.set({ streaming: null });
      this.push({ kind: 'assistant', text: reply });
      if (cut) this.push({ kind: 'notice', text: cut });
    } catch (err) {
      this.set({ streaming: null });
      if (isCancel(err) || abort.signal.aborted) {
        // What came so far stays on screen, marked, so the person can see where it was cut.
        if (reply) this.push({ kind: 'assistant', text: reply, cancelled: true });
        this.push({ kind: 'notice', text: 'cancelled: nothing of this turn was stored' });
      }
      else this.fail(err);
    } finally {
      this.turn = null;
      this.set({ busy: false });
    }
    await this.refresh();
  }

  private async universeTurn(userInput: string, resume = false): Promise<void> {
    const abort = new AbortController();
    this.turn = abort;
    if (!resume) {
      this.push({ kind: 'user', text: userInput });
      this.toolResults = [];
      this.toolInput = userInput;
    }
    this.set({ busy: true, streaming: '' });
    try {
      const body: Record<string, unknown> = { model: this.opts.model ?? 'game-1-lite-frozen', universe: this.target.id, userInput: this.toolInput };
      if (this.opts.tools) body.tools = this.opts.tools;
      if (this.toolResults.length) body.toolResults = this.toolResults;
      let res = await this.opts.backend.respond(body, { signal: abort.signal });
      for (let round = 0; res.toolCalls?.length; round++) {
        if (res.assistantRaw) this.push({ kind: 'assistant', text: res.assistantRaw });
        const open = res.toolCalls.filter((c) => !this.toolResults.some((r) => r.callId === c.callId));
        for (const c of open) this.push({ kind: 'notice', text: `tool call ${c.name}(${JSON.stringify(c.arguments)})` });
        if (!this.opts.runTool) {
          this.set({ pendingTools: open });
          this.push({ kind: 'notice', text: `type the result of ${open[0].name} as JSON (or plain text)` });
          return;
        }
        if (round >= MAX_TOOL_ROUNDS) throw new Error(`stopped after ${MAX_TOOL_ROUNDS} rounds of tool calls`);
        for (const c of open) {
          const r = await this.opts.runTool(c);
          this.toolResults.push(r);
          this.push({ kind: 'output', text: `${c.name} → ${r.ok ? '' : 'failed: '}${JSON.stringify(r.output)}` });
        }
        if (abort.signal.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError' });
        res = await this.opts.backend.respond({ ...body, toolResults: this.toolResults }, { signal: abort.signal });
      }
      this.toolResults = [];
      this.push({ kind: 'assistant', text: res.assistantRaw });
    } catch (err) {
      if (isCancel(err) || abort.signal.aborted) this.push({ kind: 'notice', text: 'cancelled: nothing of this turn was stored' });
      else this.fail(err);
    } finally {
      this.turn = null;
      this.set({ busy: false, streaming: null });
    }
    await this.refresh();
  }

  private async answerTool(text: string): Promise<void> {
    const [call, ...rest] = this.state.pendingTools;
    let output: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      output = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { result: parsed };
    } catch {
      output = { result: text };
    }
    this.toolResults.push({ callId: call.callId, name: call.name, output, ok: true });
    this.push({ kind: 'output', text: `${call.name} → ${JSON.stringify(output)}` });
    this.set({ pendingTools: rest });
    if (rest.length) {
      this.push({ kind: 'notice', text: `type the result of ${rest[0].name} as JSON (or plain text)` });
      return;
    }
    await this.universeTurn(this.toolInput, true);
  }

  private async command(line: string): Promise<void> {
    const [name, ...args] = line.slice(1).split(/\s+/);
    const arg = args.join(' ').trim();
    this.push({ kind: 'user', text: line });
    this.set({ busy: true });
    try {
      switch (name) {
        case 'help':
          this.push({ kind: 'output', text: HELP });
          break;
        case 'exit':
        case 'quit':
          this.exit();
          break;
        case 'window':
          this.push({ kind: 'output', text: await windowText(this.opts.backend, this.target) });
          break;
        case 'history':
          this.push(await historyItem(this.opts.backend, this.target, arg, this.opts.humanTimes ? (t) => timeAgo(t, (this.opts.now ?? Date.now)()) : undefined));
          break;
        case 'export':
          this.push(await exportItem(this.opts.backend, this.target, this.state.status.label, arg, this.opts.home ?? homedir()));
          break;
        case 'new':
          await this.startNew(arg);
          break;
        case 'switch':
          await this.switchTo(arg);
          break;
        default:
          this.push({ kind: 'error', text: `unknown command /${name}`, hint: 'type /help for the list', exitCode: 2 });
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.set({ busy: false });
    }
  }

  private async startNew(name: string): Promise<void> {
    const { backend } = this.opts;
    if (this.target.kind === 'universe') {
      const u = await backend.getUniverse(this.target.id);
      const created = await backend.createUniverse({ storedPrompt: u.storedPrompt, ...(name ? { displayName: name } : {}) });
      this.target = { kind: 'universe', id: created.universe };
    } else {
      const e = await backend.getEntity(this.target.id);
      const created = await backend.createEntity({ model: e.model, ...(name ? { name } : {}), ...(this.opts.instructions ? { instructions: this.opts.instructions } : {}) });
      this.target = { kind: 'entity', id: created.id };
    }
    this.targets = null;
    this.pendingReset();
    await this.refresh();
    this.push({ kind: 'notice', text: `new ${this.target.kind} ${this.state.status.label} (${this.target.id})` });
  }

  private async switchTo(ref: string): Promise<void> {
    const { backend } = this.opts;
    if (!ref) {
      const rows =
        this.target.kind === 'entity'
          ? (await backend.listEntities()).data.map((e) => `${e.id}  ${(e.name || '-').padEnd(20)} ${e.transcript.messages} messages`)
          : (await backend.listUniverses()).map((u) => `${u.id}  ${(u.displayName || u.storedPrompt).padEnd(20)} ${u.messages} messages`);
      this.push({ kind: 'output', text: [...rows, 'switch with /switch ID (or an entity name)'].join('\n') });
      return;
    }
    if (this.target.kind === 'entity') {
      this.target = { kind: 'entity', id: (await backend.resolveEntity(ref)).id };
    } else {
      this.target = { kind: 'universe', id: await backend.resolveUniverse(ref) };
    }
    this.pendingReset();
    await this.refresh();
    this.push({ kind: 'notice', text: `switched to ${this.target.kind} ${this.state.status.label}` });
  }

  private pendingReset(): void {
    this.toolResults = [];
    this.set({ pendingTools: [] });
  }
}
