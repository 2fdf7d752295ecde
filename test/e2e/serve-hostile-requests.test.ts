import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { rawRequest, servedUrl } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/temp.js';

// Single requests that once took `mgpt serve` down or wrote to its operator's terminal (issue 31).
const dir = tempDir();
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/;

async function serve(name: string, logFormat: string) {
  const env = cliEnv(dir, { MGPT_DB: `${dir}/${name}.db` });
  const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
  const server = spawnMgpt(['serve', '--port', '0', '--log-format', logFormat], env);
  return { server, key, url: await servedUrl(server) };
}

const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}Connection: close\r\n\r\n`;

describe('a malformed percent-encoding in a path', () => {
  const cases = [
    ['GET', '/v1/entities/%E0%A4%A'],
    ['GET', '/v1/entities/%ZZ/window'],
    ['DELETE', '/v1/entities/%'],
    ['POST', '/v1/entities/%E0%A4%A/messages'],
  ] as const;

  it.each(['text', 'json', 'off'])('is answered 4xx, with or without a key, and the server lives on (--log-format %s)', async (format) => {
    const { server, key, url } = await serve(`malformed-${format}`, format);
    for (const [method, path] of cases) {
      for (const auth of ['', `Authorization: Bearer ${key}\r\n`]) {
        const json = '{"content":"hi"}';
        const body = method === 'POST' ? `Content-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}` : '\r\n';
        const r = await rawRequest(url, `${method} ${path} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n${body}`);
        expect([method, path, auth !== '', r.status >= 400 && r.status < 500]).toEqual([method, path, auth !== '', true]);
      }
    }
    expect((await rawRequest(url, get('/healthz'))).status).toBe(200);
    expect(server.exitCode).toBeNull();
    server.kill('SIGTERM');
    const r = await server.result;
    expect(r.stderr).not.toContain('URIError');
    expect(r.code).toBe(0);
  });
});

describe('--log-format text', () => {
  it('escapes request-derived fields: a path cannot forge a line, send escapes to the terminal or forge a field', async () => {
    const { server, url } = await serve('text-log', 'text');
    await rawRequest(url, get('/%0Aforged'));
    await rawRequest(url, get('/%1B%5D0;x%07'));
    await rawRequest(url, get('/v1/entities/a%0D%0Aforged%E2%80%A8line%C2%9Bz'));
    await rawRequest(url, get('/v1/entities/a%20req%20forged'));
    await rawRequest(url, get('/healthz', 'X-Request-Id: "quoted\\\r\n'));
    server.kill('SIGTERM');
    const { stderr } = await server.result;
    const lines = stderr.split('\n');
    expect(lines.filter((l) => CONTROL.test(l))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('forged'))).toEqual([]);
    expect(stderr).toMatch(/ GET \/\\nforged 404 [\d.]+ ms req \S+$/m);
    expect(stderr).toMatch(/ GET \/\\x1b\]0;x\\x07 404 /);
    expect(stderr).toMatch(/ GET \/v1\/entities\/:id 401 [\d.]+ ms entity a\\r\\nforged\\u2028line\\x9bz req /);
    expect(stderr).toMatch(/ GET \/v1\/entities\/:id 401 [\d.]+ ms entity "a req forged" req [0-9a-f-]+$/m);
    expect(stderr).toMatch(/ GET \/healthz 200 [\d.]+ ms req "\\"quoted\\\\"$/m);
  });
});
