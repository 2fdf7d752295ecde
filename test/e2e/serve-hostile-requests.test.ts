import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { rawRequest, servedUrl } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/temp.js';

// Single requests that once took `mgpt serve` down or wrote to its operator's terminal (issue 31).
const dir = tempDir();

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
        const body = method === 'POST' ? 'Content-Type: application/json\r\nContent-Length: 17\r\n\r\n{"content":"hi"}' : '\r\n';
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
