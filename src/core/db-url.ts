/** Whether `--db` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** `--db` for people to read: a PostgreSQL URL without its password (`postgres://mgpt:***@host/db`); a path as is. */
export function describeDb(target: string): string {
  if (!isPostgresUrl(target)) return target;
  try {
    const u = new URL(target);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return target.replace(/:[^:@/]*@/, ':***@');
  }
}
