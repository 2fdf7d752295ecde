import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type RawReply, rawRequest, servedUrl } from '../helpers/raw-http.js';
import { tempDir } from '../helpers/temp.js';

// Malformed requests, generated from a fixed seed, against a spawned `mgpt serve` with /metrics
// and text request logs on (issue 31): each is answered 4xx, the server lives on, and no log line
// holds a control character or a field it did not write. Every case is malformed (a path no
// route serves, a method none takes, a bad key, or bytes node:http refuses), so 2xx is never right.
const SEED = 31;
const CASES = 3200;
const CONCURRENCY = 12;
const dir = tempDir();

/** mulberry32: a small PRNG, so a failing case can be generated again from the seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const chance = (p: number) => next() < p;
  const word = (n: number) => Array.from({ length: n }, () => pick([...'abcdefghijklmnopqrstuvwxyz0123456789_-'])).join('');
  return { int, pick, chance, word };
}
type Rng = ReturnType<typeof prng>;

// Percent-encodings that are not valid UTF-8 (decodeURIComponent throws on each), then valid ones of
// characters a log or a terminal must not take as they are.
const MALFORMED = ['%', '%Z', '%ZZ', '%G1', '%0', '%%', '%u0041', '%E0%A4%A', '%E0%A4', '%C0%AF', '%C0%80', '%ED%A0%80', '%F4%90%80%80', '%FF%FE', '%80', '%25%ZZ'];
const HOSTILE = ['%00', '%0A', '%0D%0A', '%0Aforged', '%09', '%1B%5B31m', '%1B%5D0;x%07', '%7F', '%C2%85', '%C2%9B', '%E2%80%A8', '%E2%80%A9', '%E2%80%AE', '%20req%20forged', '%22q%22', '%5C', '%2F', '%3D'];
// Raw bytes node:http refuses in a request target.
const RAW_BYTES = [...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)), '\x7f', '\x80', '\x9b', '\xff', ' '];
const ODD_METHODS = ['PROPFIND', 'TRACE', 'OPTIONS', 'MKCOL', 'LOCK', 'UNLOCK', 'COPY', 'MOVE', 'SEARCH', 'REPORT', 'PURGE', 'PUT', 'FROB', 'G3T', 'X-METHOD', 'get', 'post', 'delete', 'Get', 'GET\x00'];

/** A path segment no entity, model or route is named: malformed and hostile encodings, now and then thousands of characters long. */
function segment(g: Rng): string {
  let s = g.word(g.int(4));
  for (let n = 1 + g.int(3); n > 0; n--) s += (g.chance(0.6) ? g.pick(MALFORMED) : g.pick(HOSTILE)) + g.word(g.int(5));
  // Some past node's 16 KiB header limit (431), most within it.
  if (g.chance(0.06)) s += g.pick(['a', '%ZZ', '%E0%A4%A', '%0A']).repeat(500 + g.int(5000));
  return s;
}

interface Case {
  method: string;
  target: string;
  headers: string[];
  body?: string;
  version?: string;
}

type Route = (s: string) => Pick<Case, 'method' | 'target' | 'body'>;
const json = (body: unknown) => JSON.stringify(body);
/** Every route family, each with a segment where no route has one (or a name nothing has). */
const MALFORMED_PATHS: Route[] = [
  (s) => ({ method: 'GET', target: `/v1/entities/${s}` }),
  (s) => ({ method: 'PATCH', target: `/v1/entities/${s}`, body: json({ name: 'n' }) }),
  (s) => ({ method: 'DELETE', target: `/v1/entities/${s}` }),
  (s) => ({ method: 'POST', target: `/v1/entities/${s}`, body: '{}' }),
  (s) => ({ method: 'GET', target: `/v1/entities/${s}/window` }),
  (s) => ({ method: 'GET', target: `/v1/entities/${s}/messages?limit=%ZZ&after=%E0%A4%A` }),
  (s) => ({ method: 'POST', target: `/v1/entities/${s}/messages`, body: json({ content: 'hi', stream: false }) }),
  (s) => ({ method: 'GET', target: `/v1/entities/${s}/search?q=%E0%A4%A` }),
  (s) => ({ method: 'GET', target: `/v1/entities/${s}/export?format=%ZZ` }),
  (s) => ({ method: 'GET', target: `/v1/entities/${s}/${s}` }),
  (s) => ({ method: 'GET', target: `/v1/search/${s}?q=%ZZ` }),
  (s) => ({ method: 'GET', target: `/v1/models/${s}` }),
  (s) => ({ method: 'POST', target: `/v1/chat/completions/${s}`, body: json({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'hi' }] }) }),
  (s) => ({ method: 'POST', target: `/v1/chat/${s}`, body: '{}' }),
  (s) => ({ method: 'POST', target: `/v1/responses/${s}`, body: '{}' }),
  (s) => ({ method: 'POST', target: `/v1/responses${s}`, body: '{}' }),
  (s) => ({ method: 'POST', target: `/api/mgpt/universes/${s}`, body: '{}' }),
  (s) => ({ method: 'POST', target: `/api/mgpt/responses/${s}`, body: json({ model: 'game-1-lite-frozen', userInput: 'hi' }) }),
  (s) => ({ method: 'POST', target: `/backend-api/mgpt/images/${s}`, body: '{}' }),
  (s) => ({ method: 'GET', target: `/api/mgpt/logs/${s}` }),
  (s) => ({ method: 'GET', target: `/backend-api/mgpt/${s}` }),
  (s) => ({ method: 'GET', target: `/metrics/${s}` }),
  (s) => ({ method: 'GET', target: `/metrics${s}` }),
  (s) => ({ method: 'GET', target: `/healthz${s}` }),
  (s) => ({ method: 'GET', target: `/readyz/${s}` }),
  (s) => ({ method: 'HEAD', target: `/healthz/${s}` }),
  (s) => ({ method: 'GET', target: `/${s}` }),
];
/** Paths that are served, but by none of these methods. */
const SERVED_PATHS = ['/v1/entities', '/v1/models', '/v1/chat/completions', '/v1/search', '/api/mgpt/universes', '/api/mgpt/responses', '/backend-api/mgpt/images', '/backend-api/mgpt/logs', '/metrics', '/healthz', '/readyz'];
/** Routes that need a key, to send a bad one. */
const KEYED: Route[] = [
  () => ({ method: 'GET', target: '/v1/entities' }),
  () => ({ method: 'POST', target: '/v1/entities', body: json({ model: 'mgpt-1-27b' }) }),
  () => ({ method: 'GET', target: '/v1/search?q=a' }),
  () => ({ method: 'GET', target: '/v1/models' }),
  () => ({ method: 'POST', target: '/v1/chat/completions', body: json({ model: 'mgpt-1-27b', messages: [{ role: 'user', content: 'hi' }] }) }),
  () => ({ method: 'POST', target: '/api/mgpt/universes', body: '{}' }),
  () => ({ method: 'POST', target: '/backend-api/mgpt/responses', body: json({ model: 'game-1-lite-frozen', userInput: 'hi' }) }),
  () => ({ method: 'GET', target: '/api/mgpt/logs' }),
  (s) => ({ method: 'GET', target: `/v1/entities/${s}/window` }),
];

/** An Authorization header that names no valid key (never a valid key with only whitespace around it: node trims that). */
function badAuthorization(g: Rng, key: string): string {
  const [pub, secret] = key.split('.');
  const flipped = `${pub}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
  return g.pick([
    'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'bearer mgpt_live_zz', `Bearer ${flipped}`, `bearer ${flipped}`, `Bearer ${key} ${key}`,
    `Bearer ${key}%00`, `Bearer ${pub}`, `Bearer ${pub}.`, `Bearer %E0%A4%A`, 'Bearer \xff\xfe\x80', `Token ${key}`, `${key}`,
    `Bearer ${'A'.repeat(1000 + g.int(11000))}`, `Bearer mgpt_live_${'f'.repeat(16)}.${'x'.repeat(43)}`, 'Bearer a\tb', `Bearer ${key}\x01`,
  ]);
}

/** Headers that are odd, huge or refused by node:http; sent with a malformed path, so whatever they do the answer is 4xx. */
function oddHeaders(g: Rng): string[] {
  return g.pick([
    () => [`X-Request-Id: ${g.pick(['"q\\ "', '\xe9\xff', 'r'.repeat(201), `a\tb`, 'x'.repeat(8000 + g.int(4000)), '%0Aforged', ''])}`],
    () => [`X-Pad: ${'a'.repeat(1000 + g.int(11000))}`],
    () => [`Accept: ${'*/*,'.repeat(100 + g.int(2000))}`],
    () => Array.from({ length: 50 + g.int(150) }, (_, i) => `X-H${i}: ${g.word(8)}`),
    () => [`X-Ctl: a${g.pick(RAW_BYTES.filter((c) => c !== '\t' && c !== ' '))}b`],
    () => ['Content-Type: \xff/\xfe; charset=%ZZ'],
    () => [`Content-Length: ${g.pick(['-1', 'abc', '1, 2', '99999999999999999999'])}`],
    () => ['Transfer-Encoding: chunked', 'Content-Length: 3'],
    () => ['Transfer-Encoding: gzip'],
    () => ['Expect: bogus'],
    () => ['Cookie: %ZZ=%E0%A4%A; \xff=\xfe'],
    () => ['Bad Name: x'],
    () => ['X-Folded: a', ' b'],
    () => [`Authorization: Bearer ${'%ZZ'.repeat(100)}`],
  ])();
}

/** One malformed request, from the families in turn so each is covered evenly. */
function fuzzCase(i: number, g: Rng, key: string): Case {
  const auth = `Authorization: Bearer ${key}`;
  const withKey = () => (g.chance(0.5) ? [auth] : []);
  switch (i % 6) {
    case 0:
    case 1:
      return { ...MALFORMED_PATHS[g.int(MALFORMED_PATHS.length)](segment(g)), headers: withKey() };
    case 2:
      return { method: g.pick(ODD_METHODS), target: g.chance(0.5) ? g.pick(SERVED_PATHS) : MALFORMED_PATHS[g.int(MALFORMED_PATHS.length)](segment(g)).target, headers: withKey() };
    case 3:
      return { ...g.pick(KEYED)(segment(g)), headers: [`Authorization: ${badAuthorization(g, key)}`] };
    case 4:
      return { ...MALFORMED_PATHS[g.int(MALFORMED_PATHS.length)](segment(g)), headers: [...withKey(), ...oddHeaders(g)] };
    default:
      return rawCase(g, withKey());
  }
}

/** Raw bytes in the target, another form of target, or another HTTP version. */
function rawCase(g: Rng, headers: string[]): Case {
  const { method, target, body } = MALFORMED_PATHS[g.int(MALFORMED_PATHS.length)](segment(g));
  const at = 1 + g.int(target.length - 1);
  return g.pick<() => Case>([
    () => ({ method, target: target.slice(0, at) + g.pick(RAW_BYTES) + target.slice(at), headers, body }),
    () => ({ method, target: `http://evil.example${target}`, headers, body }),
    () => ({ method, target: target.slice(1), headers, body }),
    () => ({ method, target, headers, body, version: g.pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1 extra', 'HTTQ/1.1']) }),
  ])();
}

/** The bytes of a case: latin1, so a character below 256 is one byte on the wire. */
function wire(c: Case): Buffer {
  const lines = [`${c.method} ${c.target} ${c.version ?? 'HTTP/1.1'}`, 'Host: 127.0.0.1', ...c.headers, 'Connection: close'];
  if (c.body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(c.body, 'latin1')}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${c.body ?? ''}`, 'latin1');
}

async function sendAll(url: string, cases: Case[]): Promise<RawReply[]> {
  const replies: RawReply[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      replies[i] = await rawRequest(url, wire(cases[i]));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return replies;
}

// What a text log line may be, field by field: a field is quoted (escapes inside) or has no space or quote.
const FIELD = String.raw`(?:"(?:[^"\\]|\\.)*"|[^\s"]+)`;
const LOG_LINE = new RegExp(
  String.raw`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ${FIELD} ${FIELD} \d{3} \d+(?:\.\d+)? ms` +
    String.raw`(?: key ${FIELD})?(?: account ${FIELD})?(?: entity ${FIELD})?(?: universe ${FIELD})?(?: \d+\+\d+ tok)? req ${FIELD}$`,
);
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/;

describe('mgpt serve under malformed requests', () => {
  it(`answers ${CASES} generated ones 4xx, stays up, and logs each as one clean line`, async () => {
    const env = cliEnv(dir);
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create,mgpt.images:create,mgpt.logs:read'], env)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0', '--log-format', 'text'], env);
    const url = await servedUrl(server);
    const g = prng(SEED);
    const cases = Array.from({ length: CASES }, (_, i) => fuzzCase(i, g, key));
    const replies = await sendAll(url, cases);

    const wrong = replies.flatMap((r, i) => (r.status >= 400 && r.status < 500 ? [] : [`#${i} ${JSON.stringify(wire(cases[i]).toString('latin1').slice(0, 300))} -> ${r.status} ${JSON.stringify(r.text.slice(0, 300))}`]));
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(server.exitCode).toBeNull();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/metrics`)).status).toBe(200);

    server.kill('SIGTERM');
    const r = await server.result;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${url}\n`);
    const lines = r.stderr.split('\n').filter((l) => l !== '' && !/^mgpt serve: (listening on|stopping|stopped)/.test(l));
    expect(lines.filter((l) => CONTROL.test(l)).slice(0, 5)).toEqual([]);
    expect(lines.filter((l) => !LOG_LINE.test(l)).slice(0, 5)).toEqual([]);
    // Most cases reach the app (the rest node:http refuses before it): each is one line.
    expect(lines.length).toBeGreaterThan(CASES / 2);
  });
});
