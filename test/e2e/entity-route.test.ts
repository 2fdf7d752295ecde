import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  env = cliEnv(dir);
  expect((await mgpt(['config', 'set', '--profile', 'real', 'models.mgpt-1-27b.baseUrl', fake.url], env)).code).toBe(0);
  expect((await mgpt(['config', 'set', '--profile', 'real', 'models.mgpt-1-27b.model', 'fake-model'], env)).code).toBe(0);
});
afterAll(() => fake.close());

describe('which provider answers an entity (issue 37, item 6)', () => {
  it('shows the route in send --verbose and entities show, and warns once when another route answers', async () => {
    const id = (await mgpt(['entities', 'create', '--name', 'story'], env)).stdout.trim();
    const first = await mgpt(['send', 'story', 'hello', '--verbose'], env);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('route: mgpt-1-27b -> echo (profile default)');
    expect(first.stderr).not.toMatch(/last answered/);

    const switched = await mgpt(['--profile', 'real', 'send', 'story', 'again'], env);
    expect(switched.code).toBe(0);
    expect(switched.stderr).toContain('warning: story was last answered by echo; openai fake-model answers it now (profile real)');
    expect(switched.stderr.match(/last answered/g)).toHaveLength(1);
    const same = await mgpt(['--profile', 'real', 'send', 'story', 'once more'], env);
    expect(same.stderr).not.toMatch(/last answered/);

    // ask -c goes on with the most recent entity: it says so too.
    const cont = await mgpt(['ask', '-c', 'and then?'], env);
    expect(cont.stderr).toContain('warning: story was last answered by openai fake-model; echo answers it now (profile default)');

    expect((await mgpt(['--profile', 'real', 'entities', 'show', id], env)).stdout).toMatch(/^route {7}openai fake-model \(profile real\)$/m);
    expect((await mgpt(['entities', 'show', id], env)).stdout).toMatch(/^route {7}echo \(profile default\)$/m);
  });
});
