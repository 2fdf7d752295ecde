import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import { openEngine, openEngineSync } from '../../src/engine/open-engine.js';
import { tempDir } from '../helpers/temp.js';

describe('opening an engine on --db', () => {
  const dir = tempDir('mgpt-open-engine-');

  it('openEngineSync refuses a PostgreSQL URL (connecting is async) instead of taking it for a file path', () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(() => openEngineSync({ db: 'postgres://mgpt@127.0.0.1:1/mgpt' })).toThrow(BadRequestError);
      expect(() => openEngineSync({ db: 'postgresql://mgpt@127.0.0.1:1/mgpt' })).toThrow(/openEngine/);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('openEngine opens a SQLite path as openEngineSync does', async () => {
    const engine = await openEngine({ db: join(dir, 'a.db') });
    expect(engine.store.kind).toBe('sqlite');
    expect(existsSync(join(dir, 'a.db'))).toBe(true);
    await engine.close();
  });

  it('refuses bad limits before it opens (or creates) the database file', async () => {
    expect(() => openEngineSync({ db: join(dir, 'b.db'), windowBudget: 0 })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/window budget/) }));
    await expect(openEngine({ db: join(dir, 'c.db'), leaseTtlMs: -1 })).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/lease TTL/) });
    expect(existsSync(join(dir, 'b.db'))).toBe(false);
    expect(existsSync(join(dir, 'c.db'))).toBe(false);
  });
});
