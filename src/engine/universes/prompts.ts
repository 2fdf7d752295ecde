import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BadRequestError, ConflictError, NotFoundError } from '../../core/errors.js';
import { parsePromptText } from '../../core/prompt-file.js';
import type { StoredPromptInfo } from '../../core/wire/universe-types.js';
import type { PromptRow, PromptRowStore } from '../../store/types.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;
const FILE = /\.(md|txt)$/;

/** A prompt as `mgpt prompts add` gives it. */
export interface PromptInput {
  text: string;
  responseFormat?: Record<string, unknown>;
  additionalInstructions?: string;
}

/**
 * Stored prompts, in the store (docs/design.md#stored-prompts): every process and replica on one
 * database creates universes from one set. A prompts directory (`<name>.md` or `<name>.txt` with
 * optional YAML front matter) is an import source: a file whose name the store has never held is
 * imported the first time prompts are listed or that name is asked for, and `importDir` imports a
 * whole directory. A prompt that came from a file follows the file's later edits; a removed
 * prompt is remembered, so its file is not imported again.
 */
export class PromptStore {
  /** `dir` null: no prompts directory to import from. */
  constructor(
    private readonly rows: PromptRowStore,
    readonly dir: string | null,
  ) {}

  async list(): Promise<StoredPromptInfo[]> {
    if (this.dir !== null) await this.importDir(this.dir, { quiet: true });
    const rows = await Promise.all((await this.rows.list()).map((r) => this.fresh(r)));
    return rows.flatMap((r) => (r?.text == null ? [] : [info(r)]));
  }

  async get(name: string): Promise<StoredPromptInfo> {
    checkName(name);
    let row = await this.fresh(await this.rows.get(name));
    if (row === undefined && this.dir !== null && (await this.importFile(this.dir, name))) row = await this.rows.get(name);
    if (row?.text == null) {
      throw new NotFoundError(`no stored prompt named ${JSON.stringify(name)}`, {
        hint: 'list them with: mgpt prompts list; add one with: mgpt prompts add NAME -f FILE',
      });
    }
    return info(row);
  }

  async add(name: string, p: PromptInput, opts: { force?: boolean } = {}): Promise<StoredPromptInfo> {
    checkName(name);
    if (typeof p.text !== 'string' || p.text.trim() === '') throw new BadRequestError('the prompt text is empty');
    const row = toRow(name, p, null);
    if (opts.force) await this.rows.put(row);
    else if (!(await this.rows.insert(row, { overRemoved: true }))) {
      throw new ConflictError(`stored prompt ${name} already exists`, { hint: 'pass --force to replace it', code: 'already_exists' });
    }
    return this.get(name);
  }

  /** Removes a prompt; universes made from it keep their snapshot. */
  async remove(name: string): Promise<void> {
    checkName(name);
    if (!(await this.rows.remove(name, new Date().toISOString()))) {
      throw new NotFoundError(`no stored prompt named ${JSON.stringify(name)}`, { hint: 'list them with: mgpt prompts list' });
    }
  }

  /**
   * Imports every `<name>.md`/`.txt` of `dir` whose name the store has never held (a prompt
   * stored or removed meanwhile is left as it is). `quiet`: a missing directory imports nothing.
   */
  async importDir(dir: string, opts: { quiet?: boolean } = {}): Promise<{ imported: string[]; skipped: string[] }> {
    const names = promptFiles(dir, opts.quiet ?? false);
    const imported: string[] = [];
    const skipped: string[] = [];
    for (const name of names) ((await this.importFile(dir, name)) ? imported : skipped).push(name);
    return { imported, skipped };
  }

  /**
   * The row as its file now says, for a prompt that came from a file: a stored prompt is "a file"
   * whose edits reach universes created afterwards, so a changed file is written back to the store
   * (where replicas read it) before it is used. A removed prompt, one added by hand, or one whose
   * file this process cannot read is left as stored.
   */
  private async fresh(row: PromptRow | undefined): Promise<PromptRow | undefined> {
    if (row?.text == null || row.source === null) return row;
    const raw = readIfThere(row.source);
    if (raw === undefined) return row;
    const now = { ...toRow(row.name, await parsePromptText(raw, row.source), row.source), source: row.source };
    const same = now.text === row.text && now.responseFormat === row.responseFormat && now.additionalInstructions === row.additionalInstructions;
    if (same || !(await this.rows.refresh(now))) return same ? row : this.rows.get(row.name);
    return now;
  }

  /** Imports `dir/<name>.md` (or `.txt`) when the store has never held the name; true when it did. */
  private async importFile(dir: string, name: string): Promise<boolean> {
    for (const ext of ['md', 'txt']) {
      const file = join(dir, `${name}.${ext}`);
      const raw = readIfThere(file);
      if (raw === undefined) continue;
      return this.rows.insert(toRow(name, await parsePromptText(raw, file), file), { overRemoved: false });
    }
    return false;
  }
}

/** A file's text, or undefined when it is not there (another replica's path, or deleted since). */
function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/** The prompt names of a directory's files, sorted; `quiet`: none when it does not exist. */
function promptFiles(dir: string, quiet: boolean): string[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => FILE.test(f)).sort();
  } catch (err) {
    if (quiet && (err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BadRequestError(`no directory ${dir}`, { hint: 'give a directory of NAME.md or NAME.txt files' });
    throw err;
  }
  return [...new Set(files.map((f) => f.replace(FILE, '')))].filter((n) => NAME.test(n) && n.length <= 100);
}

function toRow(name: string, p: PromptInput, source: string | null): PromptRow & { text: string } {
  return {
    name,
    text: p.text,
    responseFormat: p.responseFormat === undefined ? null : JSON.stringify(p.responseFormat),
    additionalInstructions: p.additionalInstructions ?? null,
    source,
    updatedAt: new Date().toISOString(),
  };
}

function info(r: PromptRow): StoredPromptInfo {
  return {
    name: r.name,
    text: r.text ?? '',
    ...(r.responseFormat !== null ? { responseFormat: JSON.parse(r.responseFormat) as Record<string, unknown> } : {}),
    ...(r.additionalInstructions !== null ? { additionalInstructions: r.additionalInstructions } : {}),
    ...(r.source !== null ? { file: r.source } : {}),
    modifiedAt: r.updatedAt,
  };
}

function checkName(name: string): void {
  // A name is also a file name in a prompts directory: no separators, no `..`, nothing hidden.
  if (typeof name !== 'string' || name.length > 100 || !NAME.test(name)) {
    throw new BadRequestError(`stored prompt name ${JSON.stringify(name)} is not valid: letters, digits, - _ and inner dots`);
  }
}
