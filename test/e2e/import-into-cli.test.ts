import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { writeChatgptExport } from '../helpers/chatgpt-export.js';
import { tempDir } from '../helpers/temp.js';

// --into on the command line, on the local backend and as a remote client of a spawned `mgpt
// serve`: gathering conversations imported one by one, the transcript cap refused up front and
// raised, and the import's fold as a rotation that rotations lists and rotate --undo takes back.
const dir = tempDir('mgpt-import-into-cli-');
const FILLER = 'We went through the rest of it slowly, one point after another, and agreed to come back to it later on.';
const LIMITS = { MGPT_WINDOW_BUDGET: '2000', MGPT_TRANSCRIPT_CAP: '5000', MGPT_MAX_TRANSCRIPT_CAP: '20000' };
let small = '';
let large = '';

beforeAll(async () => {
  small = join(dir, 'small.json');
  large = join(dir, 'large.json');
  const talk = (prefix: string) => (i: number) => ({ id: `${prefix}${i}`, title: `Talk ${i}`, at: 1_700_000_000 + i * 86_400, texts: [`question ${i}: ${FILLER}`, `answer ${i}: ${FILLER}`] });
  await writeChatgptExport(small, 40, talk('s'));
  await writeChatgptExport(large, 100, talk('l'));
});

type Run = (args: string[]) => Promise<CliResult>;

async function scenario(run: Run): Promise<void> {
  const json = async (args: string[]) => {
    const r = await run([...args, '--json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };
  // Idempotency per conversation and target.
  expect((await json(['import', small])).totals.imported).toBe(40);
  const into = await json(['import', small, '--into', 'everything']);
  expect([into.totals.imported, into.entities.map((e: { name: string }) => e.name)]).toEqual([40, ['everything']]);
  const again = await run(['import', small, '--into', 'everything']);
  expect(again.code).toBe(0);
  expect(again.stderr).toContain('imported 0 of 40 conversations from chatgpt: 0 messages, 0 tokens; 40 skipped');
  // The fold: one rotation, trigger import, one whole note; undone on request.
  const { rotations } = await json(['rotations', 'everything']);
  expect(rotations.map((r: { trigger: string; from_seq: number }) => [r.trigger, r.from_seq])).toEqual([['import', 1]]);
  expect(rotations[0].summary.text.match(/were imported from ChatGPT/g)).toHaveLength(1);
  const window = await json(['window', 'everything']);
  expect(window.tokens).toBeLessThanOrEqual(500);
  const undo = await run(['rotate', 'everything', '--undo']);
  expect(undo.code, undo.stderr).toBe(0);
  expect((await json(['window', 'everything'])).blocks).toHaveLength(80);
  // The cap: refused up front (dry run or not), exit 2, nothing made; a raised cap lets it in.
  for (const dry of [['--dry-run'], []]) {
    const refused = await run(['import', large, '--into', 'big', ...dry]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: --into "big": the import would add [\d,]+ tokens to a transcript of 0, reaching its cap of 5,000 tokens \(a transcript at its cap is read-only\); nothing was imported\. Create it and raise its cap first: mgpt entities create --name "big", then mgpt entities update "big" --cap \d+ \(this engine allows up to 20,000\)/m);
  }
  expect((await json(['entities', 'list'])).data.some((e: { name: string }) => e.name === 'big')).toBe(false);
  expect((await run(['entities', 'create', '--name', 'big'])).code).toBe(0);
  const over = await run(['entities', 'update', 'big', '--cap', '20001']);
  expect(over.code).toBe(2);
  expect(over.stderr).toMatch(/^error: cap_tokens 20001 is over the highest this engine allows, 20000 \(its operator can allow more: engine\.maxTranscriptCap, MGPT_MAX_TRANSCRIPT_CAP\)$/m);
  expect((await json(['entities', 'update', 'big', '--cap', '20000'])).transcript.cap_tokens).toBe(20_000);
  const big = await json(['import', large, '--into', 'big']);
  expect(big.totals.imported).toBe(100);
  expect(big.entities[0].read_only).toBe(false);
}

describe('mgpt import --into (local backend)', () => {
  it('gathers, refuses over the cap, records its fold as a rotation', async () => {
    const env = cliEnv(join(dir, 'local'), LIMITS);
    await scenario((args) => mgpt(args, env));
  });
});

describe('mgpt import --into (remote backend, spawned mgpt serve)', () => {
  let server: ReturnType<typeof spawnMgpt>;
  let client: Record<string, string>;
  beforeAll(async () => {
    const serverEnv = cliEnv(join(dir, 'server'), LIMITS);
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
    server = spawnMgpt(['serve', '--port', '0'], serverEnv);
    const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
    client = cliEnv(join(dir, 'client'), { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key, MGPT_DB: join(dir, 'client', 'never.db') });
  });
  afterAll(async () => {
    server?.kill('SIGTERM');
    await server?.result;
  });

  it('the same, with the server refusing in the same words', async () => {
    await scenario((args) => mgpt(args, client));
  });
});
