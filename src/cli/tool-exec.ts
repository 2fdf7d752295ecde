import { toolOutput } from '../ui/tool-loop.js';
import type { ToolCallOut, ToolResultInput } from '../core/wire/universe-types.js';

/**
 * Runs one tool call through `cmd` (a shell command): the call as JSON on stdin, the output on
 * stdout (wrapped by `toolOutput` when it is not a JSON object); a failure becomes ok: false.
 */
export async function execTool(cmd: string, call: ToolCallOut): Promise<ToolResultInput> {
  // Loaded here: node:child_process (and node:net behind it) would cost every command ~4 ms at startup.
  const { spawn } = await import('node:child_process');
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', cmd], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.on('error', (e) => resolve({ callId: call.callId, name: call.name, ok: false, output: { error: e.message } }));
    child.on('close', (code) => {
      if (code !== 0) {
        resolve({ callId: call.callId, name: call.name, ok: false, output: { error: err.trim() || `exit code ${code}`, exitCode: code } });
        return;
      }
      resolve({ callId: call.callId, name: call.name, ok: true, output: toolOutput(out) });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify({ callId: call.callId, name: call.name, arguments: call.arguments }));
  });
}
