import Database from 'better-sqlite3';

/** Read-only look at the service's SQLite file: what is really stored. */
export function probe<T = Record<string, unknown>>(path: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

export const count = (path: string, table: string) => probe<{ n: number }>(path, `SELECT COUNT(*) AS n FROM ${table}`)[0].n;
