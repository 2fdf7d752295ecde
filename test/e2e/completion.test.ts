import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { hasTool } from '../helpers/tool.js';

const run = promisify(execFile);
const zsh = hasTool('zsh', 'THE ZSH COMPLETION TEST');
const dir = tempDir('mgpt-completion-');
const cases: Array<[string[], string]> = [
  [['mgpt', 'ent'], 'entities'],
  [['mgpt', 'entities', ''], 'create list show update delete'],
  [['mgpt', 'send', '--id'], '--idempotency-key'],
  [['mgpt', '--db', 'x.db', 'ba'], 'batch'],
  [['mgpt', 'send', 'ada', ''], ''],
  [['mgpt', 'batch', 'jobs.jsonl', '-o', ''], ''],
  [['mgpt', 'chat', '--uni'], '--universe'],
];

describe('mgpt completion', () => {
  it('bash: completes commands, subcommands and options at any depth', async () => {
    const r = await mgpt(['completion', 'bash'], cliEnv(dir));
    expect(r.code).toBe(0);
    const script = join(dir, 'mgpt.bash');
    writeFileSync(script, r.stdout);
    const probe = cases
      .map(([words]) => `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _mgpt; echo "\${COMPREPLY[*]}"`)
      .join('\n');
    const out = await run('bash', ['-c', `source ${script}\n${probe}`]);
    expect(out.stdout.split('\n').slice(0, cases.length)).toEqual(cases.map(([, want]) => want));
  });

  it.skipIf(!zsh)('zsh: the same answers through _describe, files where a value goes', async () => {
    const r = await mgpt(['completion', 'zsh'], cliEnv(dir));
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('#compdef mgpt\n')).toBe(true);
    const script = join(dir, '_mgpt');
    writeFileSync(script, r.stdout);
    // zsh's completion functions are stood in for: _describe prints the names it was given.
    const probe = cases.map(([words]) => `words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _mgpt`).join('\n');
    const stubs = `compdef() {}\n_files() { print FILES }\n_describe() { local -a arr; arr=("\${(@P)4}"); print -r -- "\${(j: :)\${(@)arr%%:*}}" }`;
    const out = await run('zsh', ['-c', `${stubs}\nsource ${script}\n${probe}`]);
    const want = cases.map(([, w]) => w || 'FILES');
    const got = out.stdout.split('\n').slice(0, cases.length);
    // zsh filters by prefix itself, so _describe gets every candidate: the wanted ones must be among them.
    got.forEach((line, i) => {
      const expected = want[i];
      if (expected === 'FILES') expect(line).toBe('FILES');
      else for (const w of expected.split(' ')) expect(line.split(' ')).toContain(w);
    });
  });

  it('an unknown shell is a usage error', async () => {
    const r = await mgpt(['completion', 'fish'], cliEnv(dir));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no completion for "fish"');
  });
});
