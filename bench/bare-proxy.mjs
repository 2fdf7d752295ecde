// The floor for what any server in the middle adds: bare node:http that forwards a request to the
// provider over a keep-alive connection and sends its answer back, with no work of its own.
// Run as its own process, as mgpt serve is: node bench/bare-proxy.mjs TARGET_ORIGIN; prints its URL.
import { Agent, createServer, request } from 'node:http';

const target = new URL(process.argv[2]);
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const path = target.pathname.replace(/\/$/, '') + req.url.replace(/^\/v1/, '');
    const out = request({ host: target.hostname, port: target.port, path, method: req.method, agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (up) => {
      const parts = [];
      up.on('data', (d) => parts.push(d));
      up.on('end', () => {
        const answer = Buffer.concat(parts);
        res.writeHead(up.statusCode ?? 502, { 'content-type': up.headers['content-type'] ?? 'application/json', 'content-length': answer.length });
        res.end(answer);
      });
    });
    out.on('error', (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    out.end(body);
  });
});
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
