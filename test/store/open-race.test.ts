import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

// Processes opening one new SQLite file at the same moment (replicas started together): each must
// open it. Before, about one open in 180 was answered "the database is busy" while they switched
// the new file to WAL together, and that mgpt serve exited at start.
const CHILD = fileURLToPath(new URL('./open-race-child.ts', import.meta.url));
const PROCESSES = 6;
const ROUNDS = 100;
const GAP_MS = 40;

describe('processes opening a new database file at once', () => {
  it(`${ROUNDS} new files, each opened by ${PROCESSES} processes at the same moment: every one opens it`, async () => {
    const dir = tempDir('mgpt-open-race-');
    // Far enough ahead for every process to have started and loaded the store.
    const start = Date.now() + 4000;
    const run = () => promisify(execFile)(process.execPath, ['--import', 'tsx', CHILD, dir, String(start), String(ROUNDS), String(GAP_MS)]);
    const results = await Promise.all(Array.from({ length: PROCESSES }, run));
    expect(results.flatMap((r) => JSON.parse(r.stdout) as string[])).toEqual([]);
  }, 60_000);
});
