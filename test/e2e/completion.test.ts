import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { hasTool } from '../helpers/tool.js';

const run = promisify(execFile);
const zsh = hasTool('zsh', 'THE ZSH COMPLETION TEST');
const fish = hasTool('fish', 'THE FISH COMPLETION TEST');
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

  it.skipIf(!fish)('fish: the same answers from complete -C, files where a file goes', async () => {
    const r = await mgpt(['completion', 'fish'], cliEnv(dir));
    expect(r.code).toBe(0);
    const script = join(dir, 'mgpt.fish');
    writeFileSync(script, r.stdout);
    writeFileSync(join(dir, 'jobs.jsonl'), '');
    const fishCases: Array<[string, string[]]> = [
      ['mgpt ent', ['entities']],
      ['mgpt entities ', ['create', 'delete', 'list', 'show', 'update']],
      ['mgpt send --id', ['--idempotency-key']],
      ['mgpt --db x.db ba', ['batch']],
      ['mgpt chat --uni', ['--universe']],
      ['mgpt entities show --', ['--json', '--help']],
      // -o takes a file: the files in the working directory.
      ['mgpt batch jobs.jsonl -o job', ['jobs.jsonl']],
      // A word that is no command: nothing (no files either, since fish's default is off).
      ['mgpt nosuch ', []],
      // Nor is the hidden helper the scripts call.
      ['mgpt __', []],
    ];
    const probe = fishCases.map(([line]) => `complete -C ${JSON.stringify(line)}; echo ---`).join('\n');
    const out = await run('fish', ['--no-config', '-c', `source ${script}\n${probe}`], { cwd: dir });
    const answers = out.stdout.split('---\n').map((block) => block.split('\n').filter(Boolean).map((l) => l.split('\t')[0]));
    fishCases.forEach(([line, want], i) => {
      if (want.length === 0) expect(answers[i], line).toEqual([]);
      else for (const w of want) expect(answers[i], line).toContain(w);
    });
  });

  describe('entity names and short ids, from the real database', () => {
    const edir = join(dir, 'entities');
    const env = cliEnv(edir);
    const ids: Record<string, string> = {};
    // The scripts call `mgpt` by the name typed: a PATH entry that holds the real binary.
    const path = () => {
      const binDir = join(edir, 'bin');
      mkdirSync(binDir, { recursive: true });
      try {
        symlinkSync(BIN, join(binDir, 'mgpt'));
      } catch {}
      return { ...env, PATH: `${binDir}:${env.PATH ?? ''}` };
    };
    const created = (async () => {
      for (const name of ['ada', 'bob smith']) {
        const r = await mgpt(['entities', 'create', '--name', name], env);
        expect(r.code).toBe(0);
        ids[name] = r.stdout.trim();
      }
    })();
    const short = (name: string) => ids[name].slice(0, 8);
    /** What a completion of `prefix` should offer: the names and short ids that start with it. */
    const cands = (prefix: string, quote = (s: string) => s) =>
      ['ada', 'bob smith', short('ada'), short('bob smith')].filter((c) => c.startsWith(prefix)).map(quote).sort();
    const lines = (text: string) => text.split('\n').filter(Boolean).sort();

    it('mgpt __complete entities lists names and short ids that start with the prefix', async () => {
      await created;
      const all = await mgpt(['__complete', 'entities'], env);
      expect(all.code).toBe(0);
      expect(all.stderr).toBe('');
      expect(lines(all.stdout)).toEqual(cands(''));
      const b = await mgpt(['__complete', 'entities', 'b'], env);
      expect(lines(b.stdout)).toEqual(cands('b'));
      expect(lines(b.stdout)).toContain('bob smith');
      // Past the short id's length, the whole id.
      const long = await mgpt(['__complete', 'entities', ids.ada.slice(0, 10)], env);
      expect(long.stdout).toBe(`${ids.ada}\n`);
    });

    it('prints nothing and exits 0 on a broken config, a missing database or an unknown kind', async () => {
      const broken = join(dir, 'broken');
      mkdirSync(join(broken, 'config'), { recursive: true });
      writeFileSync(join(broken, 'config', 'config.json'), '{ not json');
      for (const [args, e] of [
        [['__complete', 'entities'], cliEnv(broken)],
        [['__complete', 'entities'], cliEnv(join(dir, 'empty'), { MGPT_DB: join(dir, 'empty', 'none.db') })],
        [['__complete', 'entities'], { ...env, MGPT_BACKEND: 'remote', MGPT_BASE_URL: 'http://127.0.0.1:9' }],
        [['__complete', 'nosuch', 'x', 'y', '--what'], env],
      ] as Array<[string[], Record<string, string>]>) {
        const r = await mgpt(args, e);
        expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stdout: '', stderr: '' });
      }
      const { existsSync } = await import('node:fs');
      expect(existsSync(join(dir, 'empty', 'none.db'))).toBe(false);
    });

    it('is hidden: mgpt --help does not list it', async () => {
      const r = await mgpt(['--help'], env);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('completion');
      expect(r.stdout).not.toContain('__complete');
    });

    it('bash: mgpt send <TAB> offers entities, quoted; --db picks the database', async () => {
      await created;
      const r = await mgpt(['completion', 'bash'], env);
      const script = join(edir, 'mgpt.bash');
      writeFileSync(script, r.stdout);
      const probe = (words: string[]) =>
        `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _mgpt; printf '%s|' "\${COMPREPLY[@]}"; echo`;
      const lines = [
        probe(['mgpt', 'send', '']),
        probe(['mgpt', 'entities', 'show', 'b']),
        probe(['mgpt', 'send', 'ada', '']),
        probe(['mgpt', '--db', join(dir, 'other.db'), 'history', '']),
        probe(['mgpt', 'chat', short('ada').slice(0, 5)]),
        // The hidden helper the scripts call is not offered.
        probe(['mgpt', '__']),
      ];
      const out = (await run('bash', ['-c', `source ${script}\n${lines.join('\n')}`], { env: path() })).stdout.split('\n');
      const bashQuoted = (c: string) => c.replace(/ /g, '\\ ');
      expect(out[0].split('|').filter(Boolean).sort()).toEqual(cands('', bashQuoted));
      expect(out[1].split('|').filter(Boolean).sort()).toEqual(cands('b', bashQuoted));
      expect(out[2]).toBe('|');
      expect(out[3]).toBe('|');
      expect(out[4].split('|')).toContain(short('ada'));
      expect(out[5]).toBe('|');
    });

    it.skipIf(!zsh)('zsh: mgpt send <TAB> hands the entities to compadd', async () => {
      await created;
      const r = await mgpt(['completion', 'zsh'], env);
      const script = join(edir, '_mgpt');
      writeFileSync(script, r.stdout);
      const stubs = `compdef() {}\n_files() { print FILES }\n_describe() { print DESCRIBE }\ncompadd() { [[ $1 == -- ]] && shift; print -r -- "\${(j:|:)@}" }`;
      const probe = [
        `words=(mgpt send ''); CURRENT=3; _mgpt`,
        `words=(mgpt entities delete b); CURRENT=4; _mgpt`,
        `words=(mgpt send ada ''); CURRENT=4; _mgpt`,
      ].join('\n');
      const out = (await run('zsh', ['-c', `${stubs}\nsource ${script}\n${probe}`], { env: path() })).stdout.split('\n');
      expect(out[0].split('|').sort()).toEqual(cands(''));
      expect(out[1].split('|').sort()).toEqual(cands('b'));
      expect(out[2]).toBe('FILES');
    });

    it.skipIf(!fish)('fish: complete -C "mgpt send " offers entities', async () => {
      await created;
      const r = await mgpt(['completion', 'fish'], env);
      const script = join(edir, 'mgpt.fish');
      writeFileSync(script, r.stdout);
      const probe = ['mgpt send ', 'mgpt window bo', 'mgpt export '].map((l) => `complete -C ${JSON.stringify(l)}; echo ---`).join('\n');
      const out = await run('fish', ['--no-config', '-c', `source ${script}\n${probe}`], { env: path(), cwd: edir });
      const [send, window, exp] = out.stdout.split('---\n').map((b) => b.split('\n').filter(Boolean).map((l) => l.split('\t')[0]));
      expect(send.sort()).toEqual(cands(''));
      expect(window.sort()).toEqual(cands('bo'));
      expect(exp).toContain('ada');
    });
  });

  it('an unknown shell is a usage error', async () => {
    const r = await mgpt(['completion', 'tcsh'], cliEnv(dir));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no completion for "tcsh"');
    expect(r.stderr).toContain('bash, zsh or fish');
  });
});
