// The baseline for `mgpt serve` throughput: bare node:http answering the same JSON shape.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    let content = '';
    try {
      content = JSON.parse(body).content ?? '';
    } catch {}
    const out = JSON.stringify({
      id: 'chatcmpl-bare', object: 'chat.completion', created: 0, model: 'mgpt-1-27b',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, entity_id: 'bare',
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
