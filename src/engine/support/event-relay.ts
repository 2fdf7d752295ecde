import type { EngineEvents, TurnKind } from '../events.js';

/**
 * The engine's one observer, fixed when it is built: every event goes to the listeners attached
 * to it. `mgpt serve` attaches its /metrics to an engine it was given; nothing swaps the observer
 * the services hold.
 */
export class EventRelay implements EngineEvents {
  private listeners: EngineEvents[];

  constructor(first?: EngineEvents) {
    this.listeners = first ? [first] : [];
  }

  /** Hears every event from now on; the returned function stops that. */
  attach(listener: EngineEvents): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  turn(kind: TurnKind, seconds: number, firstTokenSeconds: number | undefined): void {
    for (const l of this.listeners) l.turn(kind, seconds, firstTokenSeconds);
  }

  rotation(): void {
    for (const l of this.listeners) l.rotation();
  }

  summaryRequests(n: number): void {
    for (const l of this.listeners) l.summaryRequests(n);
  }

  providerError(cls: string): void {
    for (const l of this.listeners) l.providerError(cls);
  }

  leaseConflict(): void {
    for (const l of this.listeners) l.leaseConflict();
  }

  promptTokens(total: number, cached: number | undefined): void {
    for (const l of this.listeners) l.promptTokens(total, cached);
  }

  embeddings(outcome: 'stored' | 'failed', messages: number): void {
    for (const l of this.listeners) l.embeddings(outcome, messages);
  }

  rateLimited(limit: 'requests' | 'tokens'): void {
    for (const l of this.listeners) l.rateLimited(limit);
  }

  recalled(messages: number, tokens: number): void {
    for (const l of this.listeners) l.recalled(messages, tokens);
  }
}
