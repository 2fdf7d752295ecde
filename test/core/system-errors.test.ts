import { describe, expect, it } from 'vitest';
import { BadRequestError, ConflictError, MgptError, databaseBusy, exitCodeOf, fromSystemError, isBusy } from '../../src/core/errors.js';

const sys = (code: string, path?: string) => Object.assign(new Error(`${code}: raw`), { code, path });

describe('fromSystemError', () => {
  it('turns file-system and SQLite codes into clear errors with hints', () => {
    const full = fromSystemError(sys('SQLITE_FULL')) as MgptError;
    expect([full.code, full.message]).toEqual(['disk_full', 'the disk is full']);
    expect(full.hint).toMatch(/free some space/);
    expect(exitCodeOf(full)).toBe(1);
    expect((fromSystemError(sys('ENOSPC'), '/x/a.tar') as MgptError).message).toBe('cannot write /x/a.tar: the disk is full');
    const ro = fromSystemError(sys('SQLITE_READONLY')) as MgptError;
    expect([ro.code, ro.message]).toEqual(['database_read_only', 'the database is read-only']);
    expect(ro.hint).toMatch(/reading commands still work/);
    const missing = fromSystemError(sys('ENOENT', '/missing/dir/.x.partial'), '/missing/dir/x.tar');
    expect(missing).toBeInstanceOf(BadRequestError);
    expect((missing as MgptError).code).toBe('bad_request');
    expect((missing as MgptError).message).toBe('cannot write /missing/dir/x.tar: its directory does not exist');
    expect(fromSystemError(sys('EACCES', '/etc/x'))).toMatchObject({ code: 'permission_denied', message: 'cannot write /etc/x: permission denied' });
  });

  it('a lock wait that ran out is a conflict that clears by itself (409, exit 5), never a fault', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY']) {
      const busy = fromSystemError(sys(code));
      expect(busy).toBeInstanceOf(ConflictError);
      expect((busy as MgptError).message).toMatch(/^the database is busy: /);
      expect(exitCodeOf(busy)).toBe(5);
      expect(isBusy(busy)).toBe(true);
      expect((busy as MgptError).code).toBe('busy');
    }
    // PostgreSQL's by SQLSTATE: a serialization failure, a deadlock, a lock not available.
    for (const code of ['40001', '40P01', '55P03']) {
      const busy = databaseBusy(sys(code));
      expect(busy).toMatchObject({ code: 'busy', status: 409, exitCode: 5 });
      expect(isBusy(busy)).toBe(true);
    }
    // By the code alone: the words of a lock message are not enough.
    expect(databaseBusy(new Error('database is locked'))).toBeUndefined();
    expect(databaseBusy(sys('23505'))).toBeUndefined();
    expect(databaseBusy(sys('SQLITE_LOCKED_SHAREDCACHE'))).toBeUndefined();
  });

  it('leaves typed errors and unknown failures alone', () => {
    const typed = new BadRequestError('bad');
    expect(fromSystemError(typed)).toBe(typed);
    const other = sys('SQLITE_CONSTRAINT_UNIQUE');
    expect(fromSystemError(other)).toBe(other);
    expect(fromSystemError('text')).toBe('text');
  });
});
