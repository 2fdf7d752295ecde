import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeSpool } from '../support/spool-folder.js';
import type { ReadConversation } from './read-export.js';

interface Entry {
  start: number;
  index: number;
  at: number;
  length: number;
}

/**
 * The conversations `--into` must put in time order, kept in a temporary file (one JSON line
 * each) rather than in memory: only where each one is and when it started stay here, so an
 * export of any size is ordered in bounded memory. The file is removed on close.
 */
export class ConversationSpool {
  private readonly entries: Entry[] = [];
  private size = 0;

  private constructor(
    private readonly dir: string,
    private readonly file: FileHandle,
  ) {}

  /** A new spool in a folder of its own under `root` (the engine's spool folder). */
  static async create(root: string): Promise<ConversationSpool> {
    const dir = await makeSpool(root);
    return new ConversationSpool(dir, await open(join(dir, 'conversations.jsonl'), 'w+', 0o600));
  }

  async add(c: ReadConversation, start: number): Promise<void> {
    const line = Buffer.from(JSON.stringify(c) + '\n');
    await this.file.write(line, 0, line.length, this.size);
    this.entries.push({ start, index: c.index, at: this.size, length: line.length - 1 });
    this.size += line.length;
  }

  /** The conversations by when they started (file order among equals), read back one at a time. */
  async *ordered(): AsyncGenerator<ReadConversation> {
    const order = [...this.entries].sort((a, b) => a.start - b.start || a.index - b.index);
    for (const e of order) {
      const buf = Buffer.alloc(e.length);
      await this.file.read(buf, 0, e.length, e.at);
      yield JSON.parse(buf.toString('utf8')) as ReadConversation;
    }
  }

  async close(): Promise<void> {
    await this.file.close().catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }
}
