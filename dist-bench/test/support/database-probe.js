import Database from 'better-sqlite3';
import pg from 'pg';
/**
 * A read-only look at what the service really stored. SQL is written with `?` placeholders and
 * rewritten to `$n` for PostgreSQL.
 */
export async function probe(target, sql, ...params) {
    if (target.type === 'sqlite') {
        const db = new Database(target.path, { readonly: true, fileMustExist: true });
        try {
            return db.prepare(sql).all(...params);
        }
        finally {
            db.close();
        }
    }
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
        let index = 0;
        const result = await client.query(sql.replace(/\?/g, () => `$${++index}`), params);
        return result.rows;
    }
    finally {
        await client.end();
    }
}
export const count = async (target, table) => Number((await probe(target, `SELECT COUNT(*) AS n FROM ${table}`))[0].n);
