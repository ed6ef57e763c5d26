import Database from 'better-sqlite3';
import pg from 'pg';

/** Where the service under test keeps its data: a SQLite file path or a PostgreSQL URL. */
export type DatabaseTarget = { type: 'sqlite'; path: string } | { type: 'postgres'; url: string };

/**
 * A read-only look at what the service really stored. SQL is written with `?` placeholders and
 * rewritten to `$n` for PostgreSQL.
 */
export async function probe<T = Record<string, unknown>>(target: DatabaseTarget, sql: string, ...params: unknown[]): Promise<T[]> {
  if (target.type === 'sqlite') {
    const db = new Database(target.path, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    let index = 0;
    const result = await client.query(
      sql.replace(/\?/g, () => `$${++index}`),
      params,
    );
    return result.rows as T[];
  } finally {
    await client.end();
  }
}

export const count = async (target: DatabaseTarget, table: string) => Number((await probe<{ n: number | string }>(target, `SELECT COUNT(*) AS n FROM ${table}`))[0].n);
