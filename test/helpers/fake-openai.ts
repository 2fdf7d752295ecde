import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted provider reply. Without `status`, it streams SSE like /v1/chat/completions. */
export interface ScriptedReply {
  /** The reply text; an array gives the exact chunks. */
  text?: string | string[];
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
  /** Answer with this status and body instead of a stream. */
  status?: number;
  body?: string;
  /** Wait before sending headers. */
  delayMs?: number;
  /** Wait between chunks. */
  chunkDelayMs?: number;
  /** After the first content chunk, wait for this before the rest: a reply held open until the test lets it end. */
  holdAfterFirst?: Promise<unknown>;
  /** Destroy the connection after this many content chunks (a mid-stream failure). */
  failAfterChunks?: number;
  /** After this many content chunks, an error chunk in the stream (llama-server's way), then the end. */
  streamError?: { afterChunks: number; message: string };
  /** Drop the connection before answering (a connect-level failure). */
  dropConnection?: boolean;
  /** For image requests (`modalities` with "image"): data URLs to return. */
  images?: string[];
  /** The final chunk's finish_reason (default: stop, or tool_calls with tool calls). */
  finishReason?: string;
}

/**
 * A model with a context limit that counts tokens its own way (not o200k): a prompt over
 * `nCtx` gets llama-server's 400, every reply reports the prompt's size in `usage`, and a reply
 * longer than `max_tokens` words is cut with finish_reason "length".
 */
export interface FakeModelLimit {
  nCtx: number;
  /** The model's own count of one message's text. */
  count(text: string): number;
  /** Template tokens around each message. */
  perMessage: number;
}

/** About one token per two characters: twice what o200k counts for English. */
export const HALF_CHAR_TOKENS: Omit<FakeModelLimit, 'nCtx'> = { count: (t) => Math.ceil(t.length / 2), perMessage: 5 };

/** A 1x1 PNG, as a data URL. */
export const ONE_PIXEL_PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeOpenAI {
  /** Base URL ending in /v1. */
  url: string;
  requests: RecordedRequest[];
  /** Queue replies; when the queue is empty, `fallback` answers. */
  script(...replies: ScriptedReply[]): void;
  fallback: (body: any) => ScriptedReply;
  /** Requests whose connection was closed by the client before the reply ended. */
  aborted: number;
  /** performance.now() when each streamed reply's first content chunk was written. */
  firstTokenAt: number[];
  /** Enforce a context limit counted the model's own way; undefined: no limit. */
  limit?: FakeModelLimit;
  /** The prompt size (own count) of every chat request, and whether it was refused. */
  /** Each prompt the model saw: its size, whether it was refused, its max_tokens, and whether it was a context probe (digits after the turn). */
  prompts: Array<{ tokens: number; refused: boolean; maxTokens?: number; probe: boolean }>;
  /** What `GET /props` reports as the per-slot context (llama-server's); undefined: a 404, as other servers answer. */
  propsContext?: number;
  /** What `/props` reports as `total_slots` (1 unless set). */
  propsSlots?: number;
  /** How often `/props` was asked. */
  propsAsked: number;
  /** `POST /v1/embeddings`: each input's vector; unset, a 404 (a server without embeddings); one that throws, a 500. */
  embed?: (input: string) => number[];
  /** While set, embeddings answers wait for it: what a slow embedding server does to a turn. */
  embedHold?: Promise<void>;
  close(): Promise<void>;
}

/** The last user message, as the default reply: tests know what to expect. What auto recall put before its text is not repeated. */
export function echoLastUser(body: any): ScriptedReply {
  const last = [...(body.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  const text = typeof last?.content === 'string' ? last.content.replace(/^<recalled>\n[\s\S]*?\n<\/recalled>\n\n/, '') : 'ok';
  return { text: isSummaryRequest(body) ? `summary: ${summarySource(body).slice(0, 40)}` : `reply: ${text}` };
}

/** A rotation's summary request, in either form: the conversation then a fold request, or a transcript under summary instructions. */
export function isSummaryRequest(body: any): boolean {
  const first = body.messages?.[0];
  const last = body.messages?.at(-1);
  return (first?.role === 'system' && /long-term memory/.test(first.content)) || (last?.role === 'user' && /long-term memory/.test(last.content));
}

/** The text a summary request folds: the transcript message, or the first message of the conversation form. */
function summarySource(body: any): string {
  const messages = body.messages.filter((m: any) => !/long-term memory/.test(m.content));
  const first = messages.find((m: any) => m.role !== 'system') ?? messages[0];
  return typeof first?.content === 'string' ? first.content : 'ok';
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: ScriptedReply[] = [];
  const fake: FakeOpenAI = {
    url: '',
    requests: [],
    aborted: 0,
    propsAsked: 0,
    firstTokenAt: [],
    prompts: [],
    script: (...replies) => queue.push(...replies),
    fallback: echoLastUser,
    close: () => new Promise((r) => server.close(() => r())),
  };
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === '/props') return answerProps(fake, res);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: any = null;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = Buffer.concat(chunks).toString('utf8');
    }
    fake.requests.push({ path: req.url ?? '', headers: req.headers, body });
    if (req.url?.endsWith('/embeddings')) {
      await fake.embedHold;
      return answerEmbeddings(fake, body, res);
    }
    const reply = queue.shift() ?? fake.fallback(body);
    if (Array.isArray(body?.modalities) && body.modalities.includes('image') && !reply.status && !reply.dropConnection) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        choices: [{ message: { role: 'assistant', content: '', images: (reply.images ?? [ONE_PIXEL_PNG]).map((url) => ({ type: 'image_url', image_url: { url } })) } }],
        usage: { prompt_tokens: 10, completion_tokens: 1000 },
      }));
      return;
    }
    await serve(fake.limit ? limited(fake, fake.limit, body, reply) : reply, req, res, fake, body?.stream === false);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return fake;
}

/** `/v1/embeddings` as OpenAI answers it, from `fake.embed`. */
function answerEmbeddings(fake: FakeOpenAI, body: any, res: ServerResponse): void {
  const inputs: string[] = Array.isArray(body?.input) ? body.input : [body?.input];
  let data: Array<{ object: string; index: number; embedding: number[] }>;
  try {
    if (!fake.embed) throw Object.assign(new Error('no embeddings here'), { status: 404 });
    const embed = fake.embed;
    data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: embed(text) }));
  } catch (err) {
    res.writeHead((err as { status?: number }).status ?? 500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: (err as Error).message } }));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', model: body?.model, data, usage: { prompt_tokens: 1, total_tokens: 1 } }));
}

/** llama-server's `/props` with `fake.propsContext` as its per-slot context; without one, a 404 as other servers give. */
function answerProps(fake: FakeOpenAI, res: ServerResponse): void {
  fake.propsAsked++;
  if (fake.propsContext === undefined) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ default_generation_settings: { n_ctx: fake.propsContext }, total_slots: fake.propsSlots ?? 1 }));
}

/** The prompt's size the model's own way. */
export function ownPromptTokens(limit: Omit<FakeModelLimit, 'nCtx'>, body: any): number {
  let t = 0;
  for (const m of body?.messages ?? []) t += limit.count(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')) + limit.perMessage;
  return t;
}

/** The reply as a model with `limit` gives it: refused when the prompt is too long, cut at max_tokens words. */
function limited(fake: FakeOpenAI, limit: FakeModelLimit, body: any, reply: ScriptedReply): ScriptedReply {
  if (reply.status || reply.dropConnection) return reply;
  const tokens = ownPromptTokens(limit, body);
  const refused = tokens > limit.nCtx;
  const probe = /(^|\n\n)0 1 2 3/.test(String(body?.messages?.at(-1)?.content ?? ''));
  fake.prompts.push({ tokens, refused, maxTokens: body?.max_tokens, probe });
  if (refused) {
    const message = `request (${tokens} tokens) exceeds the available context size (${limit.nCtx} tokens), try increasing it`;
    return {
      status: 400,
      body: JSON.stringify({ error: { code: 400, message, type: 'exceed_context_size_error', n_prompt_tokens: tokens, n_ctx: limit.nCtx } }),
    };
  }
  const words = typeof reply.text === 'string' ? reply.text.match(/\s*\S+/g) ?? [] : reply.text ?? [];
  const max = body?.max_tokens;
  const cut = typeof max === 'number' && words.length > max;
  const text = cut ? words.slice(0, max) : words;
  return {
    ...reply,
    text,
    finishReason: cut ? 'length' : reply.finishReason,
    usage: reply.usage ?? { prompt_tokens: tokens, completion_tokens: text.length },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serve(reply: ScriptedReply, req: IncomingMessage, res: ServerResponse, fake: FakeOpenAI, whole = false): Promise<void> {
  let closed = false;
  res.on('close', () => {
    if (!res.writableFinished) {
      closed = true;
      fake.aborted++;
    }
  });
  if (reply.delayMs) await sleep(reply.delayMs);
  if (reply.dropConnection) {
    req.socket.destroy();
    return;
  }
  if (reply.status) {
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(reply.body ?? JSON.stringify({ error: { message: `scripted ${reply.status}` } }));
    return;
  }
  if (whole) return serveWhole(reply, req, res, fake, () => closed);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  // Let written chunks reach the client before a scripted failure cuts the connection.
  const cut = async () => {
    await sleep(30);
    res.socket?.destroy();
  };
  const pieces = Array.isArray(reply.text) ? reply.text : (reply.text ?? '').match(/\s*\S+/g) ?? [];
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: 'fake' };
  const send = (obj: unknown) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  for (const [i, p] of pieces.entries()) {
    if (closed) return;
    if (reply.failAfterChunks !== undefined && i >= reply.failAfterChunks) return cut();
    if (reply.streamError && i >= reply.streamError.afterChunks) return streamError(res, reply.streamError.message);
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
    if (closed) return;
    send({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] });
    if (i === 0) fake.firstTokenAt.push(performance.now());
    if (i === 0 && reply.holdAfterFirst) await reply.holdAfterFirst;
  }
  if (reply.failAfterChunks !== undefined && pieces.length <= reply.failAfterChunks) return cut();
  for (const [i, t] of (reply.toolCalls ?? []).entries()) {
    send({
      ...base,
      choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } }] }, finish_reason: null }],
    });
  }
  const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  if (reply.usage) send({ ...base, choices: [], usage: { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens } });
  res.write('data: [DONE]\n\n');
  res.end();
}

/** An error chunk, as llama-server sends one when it cannot go on (a context shared by parallel requests ran out). */
function streamError(res: ServerResponse, message: string): void {
  res.write(`data: ${JSON.stringify({ error: { code: 500, message, type: 'server_error' } })}\n\n`);
  res.end();
}

/**
 * A request with `stream: false`: the same scripted reply as one completion, after as long as its
 * chunks would have taken. A scripted mid-stream failure cuts the connection; a stream error is a 500.
 */
async function serveWhole(reply: ScriptedReply, req: IncomingMessage, res: ServerResponse, fake: FakeOpenAI, closed: () => boolean): Promise<void> {
  const pieces = Array.isArray(reply.text) ? reply.text : (reply.text ?? '').match(/\s*\S+/g) ?? [];
  if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs * pieces.length);
  if (reply.holdAfterFirst) await reply.holdAfterFirst;
  if (closed()) return;
  if (reply.failAfterChunks !== undefined) {
    req.socket.destroy();
    return;
  }
  if (reply.streamError) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 500, message: reply.streamError.message, type: 'server_error' } }));
    return;
  }
  fake.firstTokenAt.push(performance.now());
  const toolCalls = reply.toolCalls?.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } }));
  const finish = reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
  const usage = reply.usage && { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id: 'chatcmpl-fake', object: 'chat.completion', created: 1, model: 'fake',
    choices: [{ index: 0, message: { role: 'assistant', content: pieces.join(''), ...(toolCalls?.length ? { tool_calls: toolCalls } : {}) }, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  }));
}
