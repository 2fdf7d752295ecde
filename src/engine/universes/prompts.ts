import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BadRequestError, ConflictError, NotFoundError } from '../../core/errors.js';
import { parsePromptText } from '../../core/prompt-file.js';
import type { StoredPromptInfo } from '../../core/universe-types.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

/**
 * Stored prompts: `<name>.md` or `<name>.txt` files in one directory, with optional YAML front
 * matter (`responseFormat`, `additionalInstructions`). Universes snapshot them at creation.
 */
export class PromptStore {
  /** `dir` null: no prompts directory configured (an embedded engine without universes). */
  constructor(readonly dir: string | null) {}

  list(): Promise<StoredPromptInfo[]> {
    if (this.dir === null) return Promise.resolve([]);
    let files: string[];
    try {
      files = readdirSync(this.dir).filter((f) => /\.(md|txt)$/.test(f)).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve([]);
      throw err;
    }
    const names = [...new Set(files.map((f) => f.replace(/\.(md|txt)$/, '')))].filter((n) => NAME.test(n));
    return Promise.all(names.map((n) => this.get(n)));
  }

  async get(name: string): Promise<StoredPromptInfo> {
    checkName(name);
    const dir = this.requireDir();
    for (const ext of ['md', 'txt']) {
      const file = join(dir, `${name}.${ext}`);
      let raw: string;
      try {
        raw = readFileSync(file, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      return { name, file, modifiedAt: statSync(file).mtime.toISOString(), ...(await parsePromptText(raw, file)) };
    }
    throw new NotFoundError(`no stored prompt named ${JSON.stringify(name)} in ${dir}`, {
      hint: 'list them with: mgpt prompts list; add one with: mgpt prompts add NAME -f FILE',
    });
  }

  async add(
    name: string,
    p: { text: string; responseFormat?: Record<string, unknown>; additionalInstructions?: string },
    opts: { force?: boolean } = {},
  ): Promise<StoredPromptInfo> {
    checkName(name);
    if (typeof p.text !== 'string' || p.text.trim() === '') throw new BadRequestError('the prompt text is empty');
    const dir = this.requireDir();
    const exists = ['md', 'txt'].some((ext) => {
      try {
        statSync(join(dir, `${name}.${ext}`));
        return true;
      } catch {
        return false;
      }
    });
    if (exists && !opts.force) throw new ConflictError(`stored prompt ${name} already exists`, { hint: 'pass --force to replace it', code: 'already_exists' });
    const meta: Record<string, unknown> = {};
    if (p.responseFormat !== undefined) meta.responseFormat = p.responseFormat;
    if (p.additionalInstructions !== undefined) meta.additionalInstructions = p.additionalInstructions;
    const { stringify } = await import('yaml');
    const body = Object.keys(meta).length ? `---\n${stringify(meta).trimEnd()}\n---\n${p.text}` : p.text;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, `${name}.md`), body.endsWith('\n') ? body : body + '\n');
    return this.get(name);
  }

  private requireDir(): string {
    if (this.dir === null) throw new NotFoundError('no stored prompts directory is configured for this engine');
    return this.dir;
  }
}

function checkName(name: string): void {
  // A name is a file name in one directory: no separators, no `..`, nothing hidden.
  if (typeof name !== 'string' || name.length > 100 || !NAME.test(name)) {
    throw new BadRequestError(`stored prompt name ${JSON.stringify(name)} is not valid: letters, digits, - _ and inner dots`);
  }
}
