import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';

type Statement = { all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
type SqliteConnection = { prepare(sql: string): Statement };

/**
 * Plain SQL for the few statements on the hot path (an agent_status lookup, an audit insert): they
 * run on every poll of every client, and TypeORM's query builder costs more than the database work
 * there. Statements are prepared once (SQLite) and rows are hydrated with the entity's own column
 * metadata and driver conversions, so the entity stays the single description of a table.
 */
export class HotPathSql {
  private readonly sqlite: SqliteConnection | null;
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly dataSource: DataSource) {
    this.sqlite = dataSource.options.type === 'better-sqlite3' ? (dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection : null;
  }

  /** Rows of `entity` matching `where` (column = value, ANDed), hydrated as entities. */
  async select<T extends ObjectLiteral>(entity: EntityTarget<T>, where: Partial<Record<keyof T & string, unknown>>): Promise<T[]> {
    const metadata = this.dataSource.getMetadata(entity);
    const keys = Object.keys(where);
    const conditions = keys.map((key, index) => `${metadata.findColumnWithPropertyName(key)!.databaseName} = ${this.placeholder(index)}`);
    const sql = `SELECT * FROM ${metadata.tableName} WHERE ${conditions.join(' AND ')}`;
    const rows = (await this.all(sql, Object.values(where))) as Record<string, unknown>[];
    return rows.map((row) => {
      const item = metadata.create() as T;
      for (const column of metadata.columns) {
        (item as Record<string, unknown>)[column.propertyName] = this.dataSource.driver.prepareHydratedValue(row[column.databaseName], column);
      }
      return item;
    });
  }

  /** One multi-row INSERT of `items` (columns from the entity metadata; generated columns omitted). */
  async insert<T extends ObjectLiteral>(entity: EntityTarget<T>, items: T[]): Promise<void> {
    if (items.length === 0) return;
    const metadata = this.dataSource.getMetadata(entity);
    const columns = metadata.columns.filter((column) => !column.isGenerated);
    let index = 0;
    const rows = items.map(() => `(${columns.map(() => this.placeholder(index++)).join(', ')})`);
    const params = items.flatMap((item) => columns.map((column) => this.dataSource.driver.preparePersistentValue(item[column.propertyName], column)));
    await this.run(`INSERT INTO ${metadata.tableName} (${columns.map((column) => column.databaseName).join(', ')}) VALUES ${rows.join(', ')}`, params);
  }

  private placeholder(index: number): string {
    return this.sqlite ? '?' : `$${index + 1}`;
  }

  private async all(sql: string, params: unknown[]): Promise<unknown[]> {
    if (this.sqlite) return this.prepared(sql).all(...params);
    return this.dataSource.query(sql, params);
  }

  private async run(sql: string, params: unknown[]): Promise<void> {
    if (this.sqlite) this.prepared(sql).run(...params);
    else await this.dataSource.query(sql, params);
  }

  private prepared(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.sqlite!.prepare(sql);
      // Bounded: only a handful of shapes exist (one per batch size at most for inserts).
      if (this.statements.size < 256) this.statements.set(sql, statement);
    }
    return statement;
  }
}
