import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { BIN, cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { hasTool } from '../helpers/tool.js';

/**
 * The exit code the shell in the pane wrote to `file`, once written (within 10 s; '' if never). The
 * shell creates the file before it writes the code into it: wait for the code, not the file.
 */
async function exitCodeIn(file: string): Promise<string> {
  const read = () => (existsSync(file) ? readFileSync(file, 'utf8').trim() : '');
  const end = Date.now() + 10_000;
  while (read() === '' && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return read();
}

const run = promisify(execFile);
const dir = tempDir('mgpt-chat-pty-');
// Its own tmux server, so nothing else on the machine is touched.
const socket = `mgpt-test-${process.pid}`;
const tmux = (...args: string[]) => run('tmux', ['-L', socket, ...args]);
const withTmux = hasTool('tmux', 'THE CHAT PSEUDO-TERMINAL TESTS');
const hasStressNg = spawnSync('stress-ng', ['--version']).status === 0;
let fake: FakeOpenAI;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model', TERM: 'xterm-256color' });
  // One session that lives as long as the file: when a test's last session ended, the tmux server
  // exited, and the next test's new-session could reach the server as it went away ("server exited
  // unexpectedly", seen in CI).
  if (withTmux) await tmux('new-session', '-d', '-s', 'keep', 'sleep 86400');
});
afterAll(async () => {
  await tmux('kill-server').catch(() => {});
  await fake.close();
});

const screen = async (session = 'chat') => (await tmux('capture-pane', '-p', '-t', session)).stdout;

async function until(what: string, check: (s: string) => boolean, ms = 15_000, session = 'chat'): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await screen(session).catch((err: Error) => `(no screen: ${err.message})`);
    if (check(s)) return s;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; the screen:\n${s}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!withTmux)('mgpt chat in a real pseudo-terminal (tmux)', () => {
  it('streams a reply, runs /window, cancels with Ctrl-C without a trace, and leaves with Ctrl-D', async () => {
    const created = await mgpt(['entities', 'create', '--name', 'pty'], env);
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    const exitFile = join(dir, 'exit-code');
    const script = join(dir, 'chat.sh');
    const exports = Object.entries(env).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join('\n');
    // CI=true as in CI itself: ink would then draw only the final frame, but a terminal gets a live screen.
    writeFileSync(script, `${exports}\nexport CI=true\n${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} chat pty\necho $? > ${JSON.stringify(exitFile)}\n`);
    await tmux('new-session', '-d', '-s', 'chat', '-x', '120', '-y', '40', `bash ${script}`);
    await until('the status line', (s) => s.includes('transcript 0 msgs'));

    fake.script({ text: ['streamed ', 'reply ', 'arrives ', 'in pieces'], chunkDelayMs: 250 });
    await tmux('send-keys', '-t', 'chat', 'hello pty', 'Enter');
    const partial = await until('the first tokens', (s) => s.includes('streamed'));
    expect(partial).not.toContain('in pieces');
    await until('the whole reply and the new status', (s) => s.includes('streamed reply arrives in pieces') && s.includes('transcript 2 msgs'));

    await tmux('send-keys', '-t', 'chat', '/window', 'Enter');
    await until('the window', (s) => /window: \d+ \/ 32000 tokens in 2 blocks/.test(s));

    // Readline keys edit the line in a real terminal: Ctrl-A goes to its start, Ctrl-U empties it.
    await tmux('send-keys', '-t', 'chat', '-l', 'helo');
    await until('the typed text', (s) => /› helo\s*$/m.test(s));
    await tmux('send-keys', '-t', 'chat', 'C-a');
    await tmux('send-keys', '-t', 'chat', '-l', 'X');
    await until('the text typed at the start', (s) => /› Xhelo\s*$/m.test(s));
    await tmux('send-keys', '-t', 'chat', 'End');
    await tmux('send-keys', '-t', 'chat', 'C-u');
    await until('the emptied line', (s) => /›\s*$/m.test(s) && !s.includes('Xhelo'));

    fake.script({ text: ['doomed ', 'words ', 'never ', 'kept ', 'at ', 'all'], chunkDelayMs: 300 });
    await tmux('send-keys', '-t', 'chat', 'cancel this one', 'Enter');
    await until('the doomed reply to start', (s) => s.includes('doomed'));
    await tmux('send-keys', '-t', 'chat', 'C-c');
    await until('the cancel notice', (s) => s.includes('cancelled: nothing of this turn was stored'));
    const history = await mgpt(['history', id, '--json'], env);
    expect(JSON.parse(history.stdout).data.map((m: { content: string }) => m.content)).toEqual(['hello pty', 'streamed reply arrives in pieces']);

    await tmux('send-keys', '-t', 'chat', 'C-d');
    expect(await exitCodeIn(exitFile)).toBe('0');

    // Inputs are kept (privately) for the next session, where Up recalls them.
    const kept = join(dir, 'data', 'mgpt', 'chat-history.jsonl');
    expect(readFileSync(kept, 'utf8').trim().split('\n').map((l) => JSON.parse(l))).toEqual(['hello pty', '/window', 'cancel this one']);
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    rmSync(exitFile);
    await tmux('new-session', '-d', '-s', 'again', '-x', '120', '-y', '40', `bash ${script}`);
    await until('the second session', (s) => s.includes('transcript 2 msgs'), 30_000, 'again');
    await tmux('send-keys', '-t', 'again', 'Up');
    await until('the recalled input', (s) => /› cancel this one\s*$/m.test(s), 15_000, 'again');
    await tmux('send-keys', '-t', 'again', 'C-c');
    await tmux('send-keys', '-t', 'again', 'C-d');
    expect(await exitCodeIn(exitFile)).toBe('0');
  });

  it('fits the status line to an 80-column terminal while streaming, and to 60 after a resize, with no ghost line', async () => {
    await mgpt(['entities', 'create', '--name', 'narrow'], env);
    const script = join(dir, 'narrow.sh');
    const exports = Object.entries(env).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join('\n');
    writeFileSync(script, `${exports}\nexport CI=true\n${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} chat narrow\n`);
    await tmux('new-session', '-d', '-s', 'narrow', '-x', '80', '-y', '30', `bash ${script}`);
    const statusLines = (s: string) => s.split('\n').filter((l) => l.startsWith('narrow · '));
    await until('the status line', (s) => statusLines(s).length === 1, 15_000, 'narrow');
    fake.script({ text: ['a ', 'reply ', 'that ', 'streams ', 'slowly'], chunkDelayMs: 250 });
    await tmux('send-keys', '-t', 'narrow', 'hello narrow', 'Enter');
    const streaming = await until('the reply streaming', (s) => s.includes('reply') && !s.includes('slowly'), 15_000, 'narrow');
    expect(statusLines(streaming)).toHaveLength(1);
    expect(statusLines(streaming)[0].trimEnd().length).toBeLessThanOrEqual(80);
    await until('the reply', (s) => s.includes('streams slowly'), 15_000, 'narrow');
    await tmux('resize-window', '-t', 'narrow', '-x', '60');
    const resized = await until('the status line redrawn at 60 columns', (s) => statusLines(s).length === 1 && s.split('\n').every((l) => l.trimEnd().length <= 60), 15_000, 'narrow');
    expect(statusLines(resized)[0]).toContain('narrow');
    await tmux('send-keys', '-t', 'narrow', 'C-d');
  });

  it('Ctrl-C cancels a long streamed reply while a CPU burner keeps every core busy', async () => {
    const id = (await mgpt(['entities', 'create', '--name', 'pty-busy'], env)).stdout.trim();
    const script = join(dir, 'busy.sh');
    const exports = Object.entries(env).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join('\n');
    writeFileSync(script, `${exports}\nexport CI=true\n${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} chat pty-busy\n`);
    await tmux('new-session', '-d', '-s', 'busy', '-x', '120', '-y', '40', `bash ${script}`);
    await until('the status line', (s) => s.includes('transcript 0 msgs'), 15_000, 'busy');
    // Busy loops, one a core (stress-ng where it is installed): the machine the issue was seen on.
    const burners = availableParallelism();
    const burner = hasStressNg
      ? [spawn('stress-ng', ['--cpu', String(burners), '--timeout', '120s', '--quiet'], { stdio: 'ignore' })]
      : Array.from({ length: burners }, () => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
    try {
      // 3,000 small pieces, a few ms apart: far longer than the test waits.
      fake.script({ text: Array.from({ length: 3000 }, (_, i) => `t${i}${i % 20 === 19 ? '\n' : ' '}`), chunkDelayMs: 5 });
      await tmux('send-keys', '-t', 'busy', 'a long one please', 'Enter');
      await until('the reply streaming', (s) => s.includes('t100 '), 30_000, 'busy');
      await tmux('send-keys', '-t', 'busy', 'C-c');
      await until('the cancel notice', (s) => s.includes('cancelled: nothing of this turn was stored'), 15_000, 'busy');
    } finally {
      for (const b of burner) b.kill('SIGKILL');
    }
    const history = await mgpt(['history', id, '--json'], env);
    expect(JSON.parse(history.stdout).data).toEqual([]);
    await tmux('send-keys', '-t', 'busy', 'C-d');
  });

  it('SIGTERM during a streamed reply: the REPL cancels it, frees the entity and exits 143', async () => {
    const id = (await mgpt(['entities', 'create', '--name', 'pty-term'], env)).stdout.trim();
    const exitFile = join(dir, 'term-exit-code');
    const pidFile = join(dir, 'term-pid');
    const script = join(dir, 'term.sh');
    const exports = Object.entries(env).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`).join('\n');
    const node = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} chat pty-term`;
    writeFileSync(script, `${exports}\nexport CI=true\nbash -c 'echo $$ > ${pidFile}; exec ${node.replace(/'/g, `'\\''`)}'\necho $? > ${JSON.stringify(exitFile)}\n`);
    await tmux('new-session', '-d', '-s', 'term', '-x', '120', '-y', '40', `bash ${script}`);
    await until('the status line', (s) => s.includes('transcript 0 msgs'), 15_000, 'term');
    fake.script({ text: ['cut ', 'off ', 'by ', 'a ', 'signal ', 'here'], chunkDelayMs: 400 });
    await tmux('send-keys', '-t', 'term', 'doomed', 'Enter');
    await until('the reply to start', (s) => s.includes('cut'), 15_000, 'term');
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGTERM');
    expect(await exitCodeIn(exitFile)).toBe('143');
    const next = await mgpt(['send', id, 'right after'], env);
    expect([next.code, next.stderr]).toEqual([0, '']);
    const history = await mgpt(['history', id, '--json'], env);
    expect(JSON.parse(history.stdout).data.map((m: { content: string }) => m.content)).toEqual(['right after', 'reply: right after']);
  });
});

describe('mgpt chat without a terminal', () => {
  it('reads one message a line and prints each reply; slash commands work; a failure sets the exit code', async () => {
    const id = (await mgpt(['entities', 'create', '--name', 'piped'], env)).stdout.trim();
    const r = await mgpt(['chat', id], env, 'first line\n\nsecond line\n/history 2\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('reply: first line\nreply: second line\n#3 user: second line\n#4 assistant: reply: second line\n');
    fake.script({ text: ['half ', 'a ', 'reply'], failAfterChunks: 2 });
    const cut = await mgpt(['chat', id], env, 'this one breaks\nand this one works\n');
    expect(cut.code).toBe(7);
    expect(cut.stdout).toBe('half a \nreply: and this one works\n');
    expect(cut.stderr).toMatch(/^error: .*\n/m);
    for (const args of [['chat', id, '--new'], ['chat', '--name', 'x'], ['chat', id, '--tools', 'tools.json'], ['chat', id, '--universe', id]]) {
      const usage = await mgpt(args, env, '');
      expect([args.join(' '), usage.code]).toEqual([args.join(' '), 2]);
    }
    const bad = await mgpt(['chat', id], env, '/history 0\nthird\n');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: /history takes a count from 1 to 500');
    expect(bad.stdout).toBe('reply: third\n');
  });

  it('/export onto an existing file says how to overwrite it, and -f does; ~ is $HOME', async () => {
    const id = (await mgpt(['entities', 'create', '--name', 'exporter'], env)).stdout.trim();
    const home = join(dir, 'export-home');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 't.json'), 'old');
    const homeEnv = { ...env, HOME: home };
    const refused = await mgpt(['chat', id], homeEnv, 'hello\n/export ~/t.json\n');
    expect(refused.stderr).toBe(`error: ${join(home, 't.json')} already exists\nhint: /export -f ~/t.json overwrites it\n`);
    expect(refused.code).toBe(2);
    expect(readFileSync(join(home, 't.json'), 'utf8')).toBe('old');
    const forced = await mgpt(['chat', id], homeEnv, '/export -f ~/t.json\n');
    expect([forced.code, forced.stderr]).toEqual([0, '']);
    expect(JSON.parse(readFileSync(join(home, 't.json'), 'utf8')).manifest.entity.id).toBe(id);
  });
});
