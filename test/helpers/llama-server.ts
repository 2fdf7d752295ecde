import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { testGguf } from './gguf.js';

/**
 * llama.cpp's real `llama-server`, from MGPT_TEST_LLAMA_SERVER (.ci/run sets it when the binary
 * sits beside the project). It is a linux-x64 build and never part of the repository: without it
 * the tests that need it cannot run, and say so loudly. Set but missing: a failure.
 */
export function llamaServerBinary(): string | null {
  const path = process.env.MGPT_TEST_LLAMA_SERVER;
  if (path && !existsSync(path)) throw new Error(`MGPT_TEST_LLAMA_SERVER=${path}: no such file`);
  if (!path || process.platform !== 'linux' || process.arch !== 'x64') {
    const banner = '!'.repeat(78);
    const why = path ? `it is a linux-x64 build and this is ${process.platform}-${process.arch}` : 'MGPT_TEST_LLAMA_SERVER is unset';
    console.warn(`\n${banner}\n!! THE REAL llama-server TESTS DID NOT RUN: ${why}.\n!! .ci/run sets it to ../shared/tools/llama-server/llama-server.\n${banner}\n`);
    return null;
  }
  return path;
}

/** Both the binary and the model, or null (each says why). */
export function llamaServerParts(): { binary: string; gguf: string } | null {
  const binary = llamaServerBinary();
  const gguf = testGguf();
  return binary && gguf ? { binary, gguf } : null;
}

export interface LlamaServer {
  /** OpenAI-compatible base URL, ending in /v1. */
  url: string;
  origin: string;
  process: ChildProcess;
  /** Everything it printed, for failures and its cancel log. */
  log(): string;
  stop(): Promise<void>;
}

/** Starts llama-server on a free loopback port (or `port`: a restart) with the tiny model and waits for /health. */
export async function startLlamaServer(parts: { binary: string; gguf: string }, args: string[] = [], port?: number): Promise<LlamaServer> {
  port ??= await freePort();
  const child = spawn(parts.binary, ['-m', parts.gguf, '--host', '127.0.0.1', '--port', String(port), '-t', '1', '--no-webui', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (output += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const origin = `http://127.0.0.1:${port}`;
  await waitHealthy(origin, child, () => output);
  return {
    url: `${origin}/v1`,
    origin,
    process: child,
    log: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

async function waitHealthy(origin: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}:\n${log()}`);
    try {
      if ((await fetch(`${origin}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`llama-server did not become healthy in 30 s:\n${log()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as import('node:net').AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
