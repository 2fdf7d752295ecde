import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import { Engine } from '../../src/engine/engine.js';
import { openEngine } from '../../src/engine/open-engine.js';
import { tempDir } from '../helpers/temp.js';

describe('opening an engine on --db', () => {
  const dir = tempDir('mgpt-open-engine-');

  it('new Engine refuses a PostgreSQL URL (connecting is async) instead of taking it for a file path', () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(() => new Engine({ db: 'postgres://mgpt@127.0.0.1:1/mgpt' })).toThrow(BadRequestError);
      expect(() => new Engine({ db: 'postgresql://mgpt@127.0.0.1:1/mgpt' })).toThrow(/openEngine/);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('openEngine opens a SQLite path as new Engine does', async () => {
    const engine = await openEngine({ db: join(dir, 'a.db') });
    expect(engine.store.kind).toBe('sqlite');
    expect(existsSync(join(dir, 'a.db'))).toBe(true);
    await engine.close();
  });
});
