import type { ChatItem, ChatState, NewItem } from './chat-types.js';

/** The REPL's state as a small external store (React subscribes with useSyncExternalStore). */
export class ChatStore {
  private readonly listeners = new Set<() => void>();
  private nextId = 1;

  constructor(protected state: ChatState) {}

  getState = (): ChatState => this.state;

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  protected set(patch: Partial<ChatState>): void {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn();
  }

  /** Appends items, numbered in order. */
  protected push(...items: NewItem[]): void {
    this.pushWith({}, ...items);
  }

  /** Appends items and changes the state in one update, so no screen shows one without the other. */
  protected pushWith(patch: Partial<ChatState>, ...items: NewItem[]): void {
    this.set({ ...patch, items: [...this.state.items, ...items.map((i) => ({ ...i, id: this.nextId++ }) as ChatItem)] });
  }
}
