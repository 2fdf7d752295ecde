// The baseline for `mgpt serve` throughput: bare node:http answering the same JSON shape.
// bench/sql-floor.ts reuses it with `work`: the SQL of one turn run before each answer.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

/** A bare server; `work(url, content)` (optional) runs before each answer and names the entity. */
export function bareServer(work) {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      let content = '';
      try {
        content = JSON.parse(body).content ?? '';
      } catch {}
      Promise.resolve(work ? work(req.url, content) : 'bare').then(
        (entity) => {
          const out = JSON.stringify({
            id: 'chatcmpl-bare', object: 'chat.completion', created: 0, model: 'mgpt-1-27b',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, entity_id: entity,
          });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
          res.end(out);
        },
        (err) => {
          res.writeHead(500);
          res.end(String(err));
        },
      );
    });
  });
}

/** Listens on a free loopback port and prints the URL (what the bench reads from a child). */
export function listenAndPrint(server) {
  server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) listenAndPrint(bareServer());
