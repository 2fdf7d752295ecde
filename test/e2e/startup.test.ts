import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgptBinary } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// What a one-shot command loads decides how close it starts to bare node (issue 13). A preload
// reports at exit whether any undici (the npm package or Node's internal copy) was loaded: both
// install a global dispatcher under this symbol when they load), and which built-in modules.
const dir = tempDir('mgpt-startup-');
const probe = join(dir, 'probe.cjs');
let fake: FakeOpenAI;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  writeFileSync(
    probe,
    [
      "process.on('exit', () => {",
      "  process.stderr.write('undici loaded: ' + (globalThis[Symbol.for('undici.globalDispatcher.1')] !== undefined) + '\\n');",
      "  process.stderr.write('builtins: ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ') + '\\n');",
      '});',
    ].join('\n'),
  );
  env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url });
});
afterAll(async () => {
  await fake.close();
});

describe('one-shot startup', () => {
  it('a send to an OpenAI-compatible provider streams its reply over node:http, loading no undici', async () => {
    const id = (await mgptBinary(['entities', 'create', '--name', 'ada'], env)).stdout.trim();
    fake.script({ text: ['Hello', ' there'] });
    const r = await mgptBinary(['send', id, 'hi'], { ...env, NODE_OPTIONS: `--require ${probe}` });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Hello there\n');
    expect(r.stderr).toContain('undici loaded: false');
    expect(fake.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'hi' });
  });

  it('mgpt --version loads no node:child_process (commander, respond) and no node:crypto (batch, export)', async () => {
    const r = await mgptBinary(['--version'], { ...env, NODE_OPTIONS: `--require ${probe}` });
    expect(r.code).toBe(0);
    const builtins = /^builtins: (.*)$/m.exec(r.stderr)![1].split(' ');
    expect(builtins).toContain('fs'); // the probe sees the list
    expect(builtins).not.toContain('child_process');
    expect(builtins).not.toContain('crypto');
  });
});
