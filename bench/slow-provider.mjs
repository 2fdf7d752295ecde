// A minimal OpenAI-compatible provider in its own process (as a real one would be): every
// /chat/completions answer streams "done" after a fixed delay. Prints its base URL.
import { createServer } from 'node:http';

const delay = Number(process.argv[2] ?? 100);
const frame = (delta, finish) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 0, model: 'slow', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const body = frame({ role: 'assistant', content: 'done' }, null) + frame({}, 'stop') + 'data: [DONE]\n\n';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    }, delay),
  );
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}/v1\n`));
