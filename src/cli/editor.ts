import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BadRequestError, MgptError } from '../core/errors.js';
import type { CliContext } from './context.js';

/**
 * Opens `text` in the person's editor ($VISUAL, then $EDITOR, else vi; Windows: notepad) and
 * returns what was saved. The editor command may carry arguments (`code -w`), as git allows.
 */
export function editText(ctx: CliContext, text: string, name: string): string {
  const editor = ctx.env.VISUAL || ctx.env.EDITOR || (process.platform === 'win32' ? 'notepad' : 'vi');
  const dir = mkdtempSync(join(tmpdir(), 'mgpt-edit-'));
  const file = join(dir, name.replace(/[^A-Za-z0-9_.-]/g, '_'));
  try {
    writeFileSync(file, text, { mode: 0o600 });
    const run = spawnSync(`${editor} "${file}"`, { shell: true, stdio: 'inherit', env: process.env });
    if (run.error) throw new MgptError(`cannot run the editor ${JSON.stringify(editor)}: ${run.error.message}`, { hint: 'set EDITOR to your editor, for example: export EDITOR=nano' });
    if (run.status !== 0) {
      throw new BadRequestError(`the editor ${JSON.stringify(editor)} exited with ${run.status ?? run.signal}; nothing was changed`, { hint: 'save and quit normally to apply the edit' });
    }
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
