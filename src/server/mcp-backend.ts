import type { Context } from 'hono';
import type { SendInput, TurnEvent } from '../core/wire/entity-types.js';
import type { ExchangeInput, ExchangeResult } from '../core/wire/exchange.js';
import { LocalBackend } from '../backends/local.js';
import type { Engine } from '../engine/engine.js';
import type { Env } from './env.js';
import { noteReply } from './token-accounting.js';

/**
 * The backend an MCP request on /mcp runs its tools against: the engine, as the key's account,
 * with a turn counted against the key's tokens per minute, and cancelled when its client goes
 * away, as POST .../messages does. The engine is the server's: this backend never closes it.
 */
export class ServedBackend extends LocalBackend {
  constructor(
    engine: Engine,
    private readonly c: Context<Env>,
  ) {
    super(engine, { accountId: c.get('principal').accountId });
  }

  override sendMessage(id: string, input: SendInput): AsyncIterable<TurnEvent> {
    const { c, engine } = this;
    const accountId = c.get('principal').accountId;
    // A client that hangs up cancels the turn, as on POST .../messages; so does MCP's own cancel.
    const gone = c.get('signal');
    const signal = input.signal && gone ? AbortSignal.any([input.signal, gone]) : (input.signal ?? gone);
    return (async function* () {
      for await (const ev of engine.entities.send(id, { ...input, signal, extras: { allowance: c.get('allowance'), keyId: c.get('principal').keyId } }, accountId)) {
        if (ev.type === 'done') await noteReply(c, ev);
        yield ev;
      }
    })();
  }

  /** Recorded on the ledger as the key's, as POST .../exchanges is. */
  override appendExchange(id: string, input: ExchangeInput): Promise<ExchangeResult> {
    return this.engine.entities.appendExchange(id, input, this.c.get('principal').accountId, this.c.get('principal').keyId);
  }

  override async close(): Promise<void> {}
}
