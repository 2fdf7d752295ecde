// The SSE writer's floor (docs/design-server.md): K chunk frames per request, written three ways
// by the same Hono app under node-server: to node's response directly (as src/server/sse.ts does),
// through hono/streaming's stream(), and through its streamSSE(). GET /cpu: this process's CPU.
// Run as its own process: node bench/sse-writer-server.mjs K; prints its URL.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { stream, streamSSE } from 'hono/streaming';

const K = Number(process.argv[2] ?? 16);
const chunk = (i) => `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word${i} "},"finish_reason":null}]}`;
async function* chunks() {
  for (let i = 0; i < K; i++) {
    await Promise.resolve();
    yield chunk(i);
  }
}
const app = new Hono();
app.get('/cpu', (c) => c.json(process.cpuUsage()));
app.get('/direct', async (c) => {
  const out = c.env.outgoing;
  out.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  for await (const s of chunks()) if (!out.write(`data: ${s}\n\n`)) await new Promise((r) => out.once('drain', r));
  out.end('data: [DONE]\n\n');
  return new Response(null, { headers: { 'x-hono-already-sent': 'true' } });
});
app.get('/stream', (c) => {
  c.header('Content-Type', 'text/event-stream');
  c.header('Cache-Control', 'no-cache');
  return stream(c, async (s) => {
    for await (const f of chunks()) await s.write(`data: ${f}\n\n`);
    await s.write('data: [DONE]\n\n');
  });
});
app.get('/sse', (c) =>
  streamSSE(c, async (s) => {
    for await (const f of chunks()) await s.writeSSE({ data: f });
    await s.writeSSE({ data: '[DONE]' });
  }),
);
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => console.log(`http://127.0.0.1:${info.port}`));
