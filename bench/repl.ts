// mgpt chat streaming a long reply (issue 37, item 4): the REPL's CPU against `mgpt send` printing
// the same stream, and how long Ctrl-C takes to cancel it while a CPU burner runs.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type FakeOpenAI, startFakeOpenAI } from '../test/helpers/fake-openai.js';

export interface ReplBench {
  /** CPU of the REPL process from Enter to the reply's end on screen, ms, one a run. */
  replCpuMs: number[];
  /** CPU of a whole `mgpt send` process printing the same reply to a terminal, ms. */
  sendCpuMs: number[];
  /** The same for a one-token reply: what send costs without the stream. */
  sendIdleCpuMs: number[];
  /** From writing Ctrl-C to the cancel notice arriving from the terminal, under `stress-ng --cpu 2`, ms. */
  cancelMs: number[];
  /** Whether a CPU burner ran during the cancel runs. */
  burner: boolean;
  tokens: number;
}

const TOKENS = 2000;
const END = 'END-OF-REPLY';
// Small chunks, a word each, with a line break every 20 words: about 100 lines, taller than the screen.
const reply = (n: number) => [...Array.from({ length: n - 1 }, (_, i) => `w${i}${i % 20 === 19 ? '\n' : ' '}`), END];
const TICK_MS = 1000 / 100; // /proc/<pid>/stat counts in clock ticks of 10 ms on Linux

/** User plus system CPU of a live process, from /proc/<pid>/stat, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime (fields 14 and 15)
}

/** A command in a 120x40 pseudo-terminal (script(1)); what it prints is collected. */
class Pty {
  readonly child: ChildProcess;
  out = '';
  private waiters: Array<() => void> = [];

  constructor(command: string, env: NodeJS.ProcessEnv, readonly pidFile: string) {
    const shell = `echo $$ > ${JSON.stringify(pidFile)}; stty rows 40 cols 120; exec ${command}`;
    this.child = spawn('script', ['-qfec', shell, '/dev/null'], { env: { ...env, TERM: 'xterm-256color' }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      this.out += d;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  get pid(): number {
    return Number(readFileSync(this.pidFile, 'utf8').trim());
  }

  /** Resolves with the time at which the output (from `from` on) first passed `check`. */
  until(check: (s: string) => boolean, from = 0, ms = 240_000): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; the output ends:\n${this.out.slice(-2000)}`)), ms);
      const test = () => {
        if (check(this.out.slice(from))) {
          clearTimeout(timer);
          resolve(performance.now());
        } else this.waiters.push(test);
      };
      test();
    });
  }

  write(s: string): void {
    this.child.stdin!.write(s);
  }

  exited(): Promise<void> {
    return new Promise((r) => (this.child.exitCode !== null ? r() : this.child.on('exit', () => r())));
  }
}

const node = JSON.stringify(process.execPath);

/** One REPL session: a 2,000-token reply measured for CPU, then (under the burner) one cancelled. */
async function replRun(bin: string, env: NodeJS.ProcessEnv, entity: string, fake: FakeOpenAI, work: string, chunkDelayMs: number, burn: boolean) {
  const pty = new Pty(`${node} ${JSON.stringify(bin)} chat ${entity}`, env, join(work, 'repl.pid'));
  await pty.until((s) => /\d+ msgs/.test(s));
  const pid = pty.pid;
  fake.script({ text: reply(TOKENS), chunkDelayMs });
  const before = cpuMs(pid);
  const at = pty.out.length;
  pty.write('stream a long one\r');
  // The end of the reply, then the status line's refresh after it: the turn is over.
  await pty.until((s) => s.includes(END) && s.slice(s.indexOf(END)).includes('transcript 2 msgs'), at);
  const cpu = cpuMs(pid) - before;

  // Cancel: a reply that would take long, Ctrl-C a second into it, timed to the notice.
  const burner = burn ? spawn('stress-ng', ['--cpu', '2', '--timeout', '60s', '--quiet'], { stdio: 'ignore' }) : null;
  fake.script({ text: reply(TOKENS), chunkDelayMs: 10 });
  const at2 = pty.out.length;
  pty.write('cancel this one\r');
  await pty.until((s) => s.includes('w50 '), at2);
  await new Promise((r) => setTimeout(r, 1000));
  const at3 = pty.out.length;
  const t0 = performance.now();
  pty.write('\x03');
  const seen = await pty.until((s) => s.includes('cancelled: nothing of this turn was stored'), at3);
  burner?.kill('SIGTERM');
  pty.write('\x04');
  await pty.exited();
  return { cpu, cancelMs: seen - t0 };
}

/** `mgpt send` printing the reply to a terminal: the whole process's CPU, from time(1). */
async function sendRun(bin: string, env: NodeJS.ProcessEnv, entity: string, fake: FakeOpenAI, work: string, tokens: number, chunkDelayMs: number) {
  const timeFile = join(work, 'send.time');
  rmSync(timeFile, { force: true });
  fake.script({ text: reply(tokens), chunkDelayMs });
  const pty = new Pty(`/usr/bin/time -f '%U %S' -o ${JSON.stringify(timeFile)} ${node} ${JSON.stringify(bin)} send ${entity} 'stream a long one'`, env, join(work, 'send.pid'));
  await pty.exited();
  if (!pty.out.includes(END)) throw new Error(`send did not print the reply:\n${pty.out.slice(-2000)}`);
  const [user, system] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return (user + system) * 1000;
}

export async function benchRepl(root: string, work: string, quick: boolean): Promise<ReplBench> {
  const bin = join(root, 'bin', 'mgpt');
  const fake = await startFakeOpenAI();
  const env = {
    ...process.env,
    MGPT_DB: join(work, 'repl.db'),
    MGPT_CONFIG_DIR: join(work, 'repl-cfg'),
    XDG_DATA_HOME: join(work, 'repl-data'),
    MGPT_PROVIDER: 'openai',
    MGPT_PROVIDER_URL: fake.url,
    NO_COLOR: '1',
  };
  const mg = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  const burner = spawnSync('stress-ng', ['--version']).status === 0;
  const out: ReplBench = { replCpuMs: [], sendCpuMs: [], sendIdleCpuMs: [], cancelMs: [], burner, tokens: TOKENS };
  // 2,000 chunks about 3 ms apart: a fast model's pace, the stream takes several seconds.
  const chunkDelayMs = 3;
  for (let i = 0; i < (quick ? 3 : 5); i++) {
    // A fresh entity a run, so every turn starts from the same transcript.
    const entity = mg(['entities', 'create', '--name', `repl-${i}`]).stdout.trim();
    const r = await replRun(bin, env, entity, fake, work, chunkDelayMs, burner);
    out.replCpuMs.push(r.cpu);
    out.cancelMs.push(r.cancelMs);
    const sender = mg(['entities', 'create', '--name', `send-${i}`]).stdout.trim();
    out.sendCpuMs.push(await sendRun(bin, env, sender, fake, work, TOKENS, chunkDelayMs));
    out.sendIdleCpuMs.push(await sendRun(bin, env, sender, fake, work, 1, 0));
  }
  await fake.close();
  return out;
}
