import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request llama-server answered: what it processed afresh (`prompt_n`) and what its cache served (`cache_n`). */
export interface Timed {
  /** A rotation summary request (it asks for the entity's long-term memory). */
  summary: boolean;
  promptN: number;
  cacheN: number;
  /** The request's messages. */
  messages: Array<{ role: string; content: unknown }>;
  /** The HTTP status llama-server answered with. */
  status: number;
  /** The answer's body when it was not a 200 (the template's refusal, say). */
  error?: string;
}

/** Forwards to llama-server and keeps the timings of each answered request. */
export async function recordingProxy(target: string, seen: Timed[]): Promise<{ origin: string; close(): void }> {
  const server = createServer((req, res) => forward(target, req, res, seen));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => server.close() };
}

function forward(target: string, req: IncomingMessage, res: ServerResponse, seen: Timed[]): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const messages = messagesOf(body.toString('utf8'));
    const summary = [messages[0], messages.at(-1)].some((m) => typeof m?.content === 'string' && m.content.includes('long-term memory'));
    const up = request(`${target}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      let text = '';
      answer.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        res.write(c);
      });
      answer.on('end', () => {
        res.end();
        const t = lastTimings(text);
        const status = answer.statusCode ?? 502;
        if (t || status !== 200) seen.push({ summary, promptN: t?.prompt_n ?? 0, cacheN: t?.cache_n ?? 0, messages, status, ...(status !== 200 ? { error: text } : {}) });
      });
    });
    up.on('error', () => res.destroy());
    up.end(body);
  });
}

function messagesOf(body: string): Timed['messages'] {
  try {
    return (JSON.parse(body) as { messages?: Timed['messages'] }).messages ?? [];
  } catch {
    return [];
  }
}

function lastTimings(text: string): { prompt_n: number; cache_n: number } | undefined {
  const at = text.lastIndexOf('"timings"');
  if (at < 0) return undefined;
  const m = /"timings":\{"cache_n":(\d+),"prompt_n":(\d+)/.exec(text.slice(at));
  return m ? { cache_n: Number(m[1]), prompt_n: Number(m[2]) } : undefined;
}
