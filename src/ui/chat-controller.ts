import { homedir } from 'node:os';
import type { Usage } from '../core/wire/entity-types.js';
import { cutNotice, recallNotice, rotationNotice } from './finish-notice.js';
import { TURN_CANCELLED } from '../core/errors.js';
import { runToolLoop, toolOutput } from './tool-loop.js';
import type { RespondInput, ToolResultInput } from '../core/wire/universe-types.js';
import { HELP, exportItem, historyItem, searchItem, windowText } from './chat-commands.js';
import { rotationsItem } from './rotations-item.js';
import { instructionsItem, memoryItem, rotateItem } from './chat-steer.js';
import { describeError, isCancel } from './chat-errors.js';
import { loadStatus } from './chat-status.js';
import { TEXT_ALIASES, UNIVERSE_MODEL } from '../core/wire/universe-types.js';
import { ChatStore } from './chat-store.js';
import { createTarget, resolveTarget, switchTargets, targetList } from './chat-targets.js';
import type { ChatOptions, ChatTarget, NewItem } from './chat-types.js';
import { type Completion, type SwitchTarget, complete, wantsTargets } from './completion.js';
import { StreamThrottle } from './stream-throttle.js';
import { timeAgo } from './time-ago.js';

export type { ChatItem, ChatOptions, ChatState, ChatStatus, ChatTarget } from './chat-types.js';
export { HELP } from './chat-commands.js';

const cancelled = () => Object.assign(new Error('cancelled'), { name: 'AbortError' });

/**
 * The REPL's logic without the screen: turns, cancellation, slash commands and status, as a small
 * store the ink component subscribes to. Errors become items; nothing here ends the process.
 */
export class ChatController extends ChatStore {
  private turn: AbortController | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  /** A universe turn's results so far (typed by the person, or run), sent cumulatively. */
  private toolResults: ToolResultInput[] = [];
  private toolInput = '';
  private target: ChatTarget;
  /** What `/switch` completes to, read once a session (and again after `/new`). */
  private targets: SwitchTarget[] | null = null;
  /** Lines entered while a reply was coming, sent in order once it ends. */
  private queue: string[] = [];
  /** Each entity's last turn's usage, for /window. */
  private readonly lastUsage = new Map<string, Usage>();
  private readonly said = new Set<string>();
  private leaving = false;
  /** A universe's model alias for its next turns (`/model` changes it). */
  private universeModel: string | undefined;
  /** The last message whose entity turn failed or was cancelled, so stored nothing: what `/retry` sends. */
  private retryText: string | null = null;

  constructor(private readonly opts: ChatOptions) {
    super({
      items: [],
      streaming: null,
      busy: false,
      status: { kind: opts.target.kind, id: opts.target.id, label: opts.target.id, backend: opts.backend.kind },
      pendingTools: [],
      exited: false,
    });
    this.target = opts.target;
    this.universeModel = opts.model;
  }

  /** Loads the status line and greets; an unknown target is an error item, not a crash. */
  /** A notice from outside a turn's events (the remote backend waiting out a rate limit). */
  notice(text: string): void {
    this.push({ kind: 'notice', text });
  }

  /** A notice that says the same thing every turn (a reply cut at the limit) is said once a session. */
  private sayOnce(key: string, text: string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.push({ kind: 'notice', text });
  }

  async start(): Promise<void> {
    await this.refresh();
    const what = this.target.kind === 'entity' ? 'entity' : 'universe';
    this.push({ kind: 'notice', text: `${what} ${this.state.status.label} on the ${this.opts.backend.kind} backend; /help lists commands, Ctrl-D leaves` });
    for (const text of this.opts.notices ?? []) this.push({ kind: 'notice', text });
  }

  /** Re-reads the status line; failures are shown inline. */
  async refresh(): Promise<void> {
    try {
      const status = await loadStatus(this.opts, this.target, this.state.status, this.universeModel);
      const route = status.kind === 'entity' && status.model ? this.opts.route?.(status.model) : undefined;
      this.set({ status: { ...status, route } });
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
      this.targets ??= await switchTargets(this.opts, this.target);
    } catch {
      return complete(line);
    }
    return complete(line, this.targets);
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
    const d = describeError(err);
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
    let recalled: string | undefined;
    const shown = new StreamThrottle((text) => this.set({ streaming: text }));
    try {
      for await (const ev of this.opts.backend.sendMessage(this.target.id, { content, signal: abort.signal, ...(this.opts.memoryTool !== undefined ? { memoryTool: this.opts.memoryTool } : {}) })) {
        if (abort.signal.aborted) break;
        if (ev.type === 'rotation') {
          this.push({ kind: 'notice', text: rotationNotice(ev, true) });
        } else if (ev.type === 'delta') {
          reply += ev.text;
          shown.update(reply);
        } else if (ev.type === 'done') {
          reply = ev.completion.choices[0]?.message.content ?? reply;
          this.lastUsage.set(this.target.id, ev.completion.usage);
          cut = cutNotice(ev.completion, this.opts.cutLimit?.(ev.completion.model));
          recalled = recallNotice(ev.completion.recalled);
        }
      }
      if (abort.signal.aborted) throw cancelled();
      this.retryText = null;
      shown.stop();
      this.pushWith({ streaming: null }, { kind: 'assistant', text: reply });
      if (recalled) this.push({ kind: 'notice', text: recalled });
      if (cut) this.sayOnce('cut', cut);
    } catch (err) {
      this.retryText = content;
      if (isCancel(err) || abort.signal.aborted) {
        shown.stop();
        // What came so far stays on screen, marked, so the person can see where it was cut.
        const cut = reply ? [{ kind: 'assistant' as const, text: reply, cancelled: true }] : [];
        this.pushWith({ streaming: null }, ...cut, { kind: 'notice', text: TURN_CANCELLED });
      } else {
        shown.flush();
        this.set({ streaming: null });
        this.fail(err);
      }
    } finally {
      shown.stop();
      this.turn = null;
      this.set({ busy: false });
    }
    await this.refresh();
  }

  /** A universe turn through the one tool-call loop; without a runner it waits for typed results. */
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
      const body: RespondInput = { model: this.universeModel ?? UNIVERSE_MODEL, universe: this.target.id, userInput: this.toolInput };
      if (this.opts.tools) body.tools = this.opts.tools;
      const { backend } = this.opts;
      const outcome = await runToolLoop({
        respond: (b, o) => backend.respond(b, o),
        body,
        results: this.toolResults,
        runTool: this.opts.runTool,
        signal: abort.signal,
        onToolCalls: (res, open) => {
          if (res.assistantRaw) this.push({ kind: 'assistant', text: res.assistantRaw });
          for (const c of open) this.push({ kind: 'notice', text: `tool call ${c.name}(${JSON.stringify(c.arguments)})` });
        },
        onToolResult: (call, r) => this.push({ kind: 'output', text: `${call.name} → ${r.ok ? '' : 'failed: '}${JSON.stringify(r.output)}` }),
      });
      if (outcome.pending.length) {
        this.toolResults = outcome.results;
        this.set({ pendingTools: outcome.pending });
        this.push({ kind: 'notice', text: `type the result of ${outcome.pending[0].name} as JSON (or plain text)` });
        return;
      }
      this.toolResults = [];
      this.push({ kind: 'assistant', text: outcome.response.assistantRaw });
    } catch (err) {
      if (isCancel(err) || abort.signal.aborted) this.push({ kind: 'notice', text: TURN_CANCELLED });
      else this.fail(err);
    } finally {
      this.turn = null;
      this.set({ busy: false, streaming: null });
    }
    await this.refresh();
  }

  /** A line typed while tool calls wait: the next call's result (as `respond --tool-exec` reads a tool's stdout). */
  private async answerTool(text: string): Promise<void> {
    const [call, ...rest] = this.state.pendingTools;
    const output = toolOutput(text);
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
          this.push({ kind: 'output', text: await windowText(this.opts, this.target, this.lastUsage.get(this.target.id)) });
          break;
        case 'search':
          this.push(await searchItem(this.opts, this.target, arg, this.opts.humanTimes ? (t) => timeAgo(t, (this.opts.now ?? Date.now)()) : undefined));
          break;
        case 'rotations':
          this.push(await rotationsItem(this.opts, this.target, this.opts.humanTimes ? (t) => timeAgo(t, (this.opts.now ?? Date.now)()) : undefined));
          break;
        case 'history':
          this.push(await historyItem(this.opts, this.target, arg, this.opts.humanTimes ? (t) => timeAgo(t, (this.opts.now ?? Date.now)()) : undefined));
          break;
        case 'export':
          this.push(await exportItem(this.opts, this.target, this.state.status.label, arg, this.opts.home ?? homedir()));
          break;
        case 'new':
          await this.moveTo(await createTarget(this.opts, this.target, arg, this.opts.instructions), 'new');
          break;
        case 'switch':
          if (!arg) this.push({ kind: 'output', text: await targetList(this.opts, this.target) });
          else await this.moveTo(await resolveTarget(this.opts, this.target, arg), 'switched to');
          break;
        default:
          if (!(await this.steer(name, arg))) this.push({ kind: 'error', text: `unknown command /${name}`, hint: 'type /help for the list', exitCode: 2 });
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.set({ busy: false });
    }
  }

  /** The steering commands (chat-steer.ts, thin calls of the Backend); false when `name` is none of them. */
  private async steer(name: string, arg: string): Promise<boolean> {
    if (name === 'memory') this.push(await memoryItem(this.opts, this.target, arg));
    else if (name === 'instructions') this.push(await instructionsItem(this.opts, this.target, arg));
    else if (name === 'rotate' || name === 'undo') await this.rotate(name);
    else if (name === 'model') this.push(this.modelItem(arg));
    else if (name === 'retry') await this.retry();
    else return false;
    // Memory and rotations change what the gauge shows.
    if (name !== 'model' && name !== 'retry') await this.refresh();
    return true;
  }

  /** `/rotate`, `/undo`: cancellable with Ctrl-C like a turn, and then nothing is written. */
  private async rotate(action: 'rotate' | 'undo'): Promise<void> {
    const abort = new AbortController();
    this.turn = abort;
    try {
      this.push(await rotateItem(this.opts, this.target, action, abort.signal));
    } finally {
      this.turn = null;
    }
  }

  /** `/model`: who answers; a universe's alias can change (an entity's model is fixed for its life). */
  private modelItem(arg: string): NewItem {
    const { status } = this.state;
    if (this.target.kind === 'entity') {
      if (arg) return { kind: 'error', text: `an entity's model is fixed for its life (${status.model ?? 'mgpt-1-27b'})`, hint: 'who answers it is its route: mgpt models', exitCode: 2 };
      return { kind: 'output', text: `model ${status.model ?? '?'}${status.route ? `, answered by ${status.route}` : ''}` };
    }
    if (!arg) return { kind: 'output', text: `model alias ${this.universeModel ?? UNIVERSE_MODEL}` };
    if (!(TEXT_ALIASES as readonly string[]).includes(arg)) return { kind: 'error', text: `unknown model alias ${arg}`, hint: `one of ${TEXT_ALIASES.join(', ')}`, exitCode: 2 };
    this.universeModel = arg;
    this.set({ status: { ...status, model: arg } });
    return { kind: 'output', text: `the next turns use ${arg}` };
  }

  /** `/retry`: the last entity message whose turn stored nothing, sent again. */
  private async retry(): Promise<void> {
    if (this.target.kind !== 'entity') {
      this.push({ kind: 'error', text: '/retry is for entities: a universe keeps the message of a failed turn', hint: 'send the message again', exitCode: 2 });
    } else if (this.retryText === null) {
      this.push({ kind: 'error', text: 'nothing to retry: the last turn was stored (a transcript only grows)', exitCode: 2 });
    } else {
      await this.entityTurn(this.retryText);
    }
  }

  /** After `/new` or `/switch`: a fresh status line, and no tool calls of the old target left waiting. */
  private async moveTo(target: ChatTarget, how: 'new' | 'switched to'): Promise<void> {
    this.target = target;
    this.retryText = null;
    if (how === 'new') this.targets = null;
    this.toolResults = [];
    this.set({ pendingTools: [] });
    await this.refresh();
    const id = how === 'new' ? ` (${this.target.id})` : '';
    this.push({ kind: 'notice', text: `${how} ${this.target.kind} ${this.state.status.label}${id}` });
  }
}
