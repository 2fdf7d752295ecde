import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { collect, done } from '../helpers/engine.js';
import { STORY_PROMPTS } from '../helpers/gguf.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { tempDir } from '../helpers/temp.js';

// The openai provider against llama.cpp's real llama-server (a 2,048-token context, its own
// tokenizer, its own 400s): what a scripted fake cannot show.
const parts = llamaServerParts();
const dir = tempDir('mgpt-llama-server-');

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Passes requests to the server and keeps the usage each streamed reply reported. */
async function usageRecorder(target: string): Promise<{ url: string; usages: Usage[]; close(): Promise<void> }> {
  const usages: Usage[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    // A new connection each time: a pooled one the server already closed would fail the turn.
    const upstream = await new Promise<{ status: number; type: string; body: string }>((resolve) => {
      const out = request(target + (req.url ?? '').replace(/^\/v1/, ''), { method: req.method, agent: false, headers: { 'content-type': 'application/json' } }, (r) => {
        let body = '';
        r.setEncoding('utf8').on('data', (d) => (body += d));
        r.on('end', () => resolve({ status: r.statusCode ?? 502, type: r.headers['content-type'] ?? 'application/json', body }));
      });
      out.on('error', (err) => resolve({ status: 502, type: 'text/plain', body: String(err) }));
      out.end(Buffer.concat(chunks));
    });
    const body = upstream.body;
    for (const line of body.split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const usage = (JSON.parse(line.slice(6)) as { usage?: Usage }).usage;
      if (usage) usages.push(usage);
    }
    res.writeHead(upstream.status, { 'content-type': upstream.type });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    usages,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

// The binary (linux-x64 only) and the model live beside the project, never in it: without them
// llamaServerParts() prints a banner saying these did not run; .ci/run points at both, so CI runs them.
describe.skipIf(!parts)('the openai provider against the real llama-server', () => {
  let server: LlamaServer;
  beforeAll(async () => {
    // The server's own settings, not mgpt's: replies of at most 100 tokens keep the run short.
    server = await startLlamaServer(parts!, ['-c', '2048', '-n', '100']);
  });
  afterAll(() => server?.stop());

  it('holds 30 turns with the default budget and no configuration; usage is what the server reported', async () => {
    const recorder = await usageRecorder(server.url);
    const engine = openEngineSync({ db: `${dir}/thirty.db`, route: () => ({ provider: 'openai', baseUrl: recorder.url, model: 'stories', maxRetries: 0 }) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b', instructions: 'Tell short stories about Lily.' }, 'local');
    expect(e.window.budget_tokens).toBe(32_000);
    const refusedAt: number[] = [];
    const learn = engine.deps.calibration.learn.bind(engine.deps.calibration);
    let turn = 0;
    engine.deps.calibration.learn = (...args) => {
      refusedAt.push(turn);
      return learn(...args);
    };
    let rotations = 0;
    for (turn = 0; turn < 30; turn++) {
      const events = await collect(engine.entities.send(e.id, { content: `${STORY_PROMPTS[turn % STORY_PROMPTS.length]} (${turn})` }, 'local'));
      rotations += events.filter((x) => x.type === 'rotation').length;
      const c = done(events).completion;
      const reported = recorder.usages.at(-1)!;
      expect(c.usage).toMatchObject({ prompt_tokens: reported.prompt_tokens, completion_tokens: reported.completion_tokens });
      expect(c.usage.prompt_tokens + c.usage.completion_tokens).toBeLessThanOrEqual(2048);
    }
    // Nothing said the context was 2,048 tokens: one refusal taught it, none came later.
    expect(refusedAt.length).toBeGreaterThanOrEqual(1);
    expect(refusedAt.length).toBeLessThanOrEqual(3);
    expect(refusedAt.every((t) => t < 20)).toBe(true);
    expect(rotations).toBeGreaterThanOrEqual(1);
    const row = (await engine.store.calibration.get(`openai:${recorder.url}#stories`))!;
    console.log(`llama-server 2048: refused at turns [${refusedAt}], factor ${row.factor.toFixed(2)} after ${row.samples} samples, ${rotations} rotations`);
    expect(row.contextTokens).toBe(2048);
    const w = await engine.entities.window(e.id, 'local');
    expect(checkWindowInvariant(w.blocks.map((b) => ({ kind: b.kind, covers: b.covers })), 60)).toBeNull();
    engine.close();
    await recorder.close();
  }, 240_000);

  it('reports finish_reason length for a reply cut at the route maxTokens', async () => {
    const engine = openEngineSync({ db: `${dir}/length.db`, route: () => ({ provider: 'openai', baseUrl: server.url, model: 'stories', maxTokens: 5 }) });
    const e = await engine.entities.create({ model: 'mgpt-1-27b' }, 'local');
    const c = done(await collect(engine.entities.send(e.id, { content: 'Once upon a time' }, 'local'))).completion;
    expect(c.choices[0].finish_reason).toBe('length');
    expect(c.usage.completion_tokens).toBe(5);
    const res = await engine.respond({ model: 'game-1-lite-frozen', userInput: 'Once upon a time' });
    expect(res.diagnostics.provider.finishReason).toBe('length');
    expect(res.diagnostics.warnings).toEqual(['reply cut at 5 tokens (the route\'s maxTokens or the model\'s context)']);
    engine.close();
  });

  it('accepts tool_choice in every shape, and reports a required tool answered with text', async () => {
    const engine = openEngineSync({ db: `${dir}/tools.db`, route: () => ({ provider: 'openai', baseUrl: server.url, model: 'stories', maxTokens: 8 }) });
    const tools = [{ type: 'function', name: 'roll', parameters: { type: 'object', properties: { sides: { type: 'integer' } } } }];
    for (const toolChoice of ['auto', 'none', 'required', { type: 'function', name: 'roll' }, { type: 'function', function: { name: 'roll' } }]) {
      const res = await engine.respond({ model: 'game-1-lite-frozen', userInput: 'Roll a die.', tools, toolChoice } as never);
      const forced = toolChoice !== 'auto' && toolChoice !== 'none';
      // The tiny story model cannot call tools; a forced choice it answered with text is said plainly.
      if (res.toolCalls === undefined && forced) expect(res.diagnostics.warnings?.join(' ')).toMatch(/answered with text/);
      expect(res.assistantRaw.length + (res.toolCalls?.length ?? 0)).toBeGreaterThan(0);
    }
    engine.close();
  });
});

// Same parts as above: a banner when they are missing, always run in CI.
describe.skipIf(!parts)('a llama-server killed mid-stream', () => {
  /** A server that streams long replies, killed once the first reply text reached the user. */
  async function killMidStream(args: string[], env: Record<string, string>) {
    const server = await startLlamaServer(parts!, ['-c', '4096', '-n', '3000', '--temp', '0']);
    const sending = spawnMgpt([...args, 'Once upon a time'], { ...env, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: server.url });
    await new Promise<void>((resolve) => sending.stdout!.once('data', () => resolve()));
    server.process.kill('SIGKILL');
    const r = await sending.result;
    await server.stop();
    return r;
  }

  it('stores nothing and exits 7 on the local backend', async () => {
    const env = cliEnv(`${dir}/kill-local`);
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    const r = await killMidStream(['send', 'ada'], env);
    expect([r.code, r.stderr]).toEqual([7, expect.stringMatching(/^error: /m)]);
    const shown = JSON.parse((await mgpt(['entities', 'show', 'ada', '--json'], env)).stdout);
    expect(shown.transcript.messages).toBe(0);
  });

  it('stores nothing and exits 7 through mgpt serve on the remote backend', async () => {
    const serverEnv = cliEnv(`${dir}/kill-remote`);
    const server = await startLlamaServer(parts!, ['-c', '4096', '-n', '3000', '--temp', '0']);
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
    const serve = spawnMgpt(['serve', '--port', '0'], { ...serverEnv, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: server.url });
    const url = await new Promise<string>((resolve) => serve.stdout!.once('data', (d) => resolve(String(d).trim())));
    const client = cliEnv(`${dir}/kill-client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key });
    expect((await mgpt(['entities', 'create', '--name', 'far'], client)).code).toBe(0);
    const sending = spawnMgpt(['send', 'far', 'Once upon a time'], client);
    await new Promise<void>((resolve) => sending.stdout!.once('data', () => resolve()));
    server.process.kill('SIGKILL');
    const r = await sending.result;
    await server.stop();
    expect([r.code, r.stderr]).toEqual([7, expect.stringMatching(/^error: /m)]);
    const shown = JSON.parse((await mgpt(['entities', 'show', 'far', '--json'], client)).stdout);
    expect(shown.transcript.messages).toBe(0);
    serve.kill('SIGTERM');
    await serve.result;
  });
});
