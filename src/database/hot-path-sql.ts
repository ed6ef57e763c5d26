import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';

type Statement = { all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
type SqliteConnection = {
  prepare(sql: string): Statement;
  transaction<A extends unknown[], T>(fn: (...args: A) => T): { immediate(...args: A): T };
};
type ImmediateTransaction = { immediate(fn: (sql: SyncSql) => unknown): unknown };

/** Synchronous statements for a SQLite transaction that nothing else can interleave with. */
export interface SyncSql {
  all(sql: string, params?: unknown[]): unknown[];
  run(sql: string, params?: unknown[]): void;
  insert<T extends ObjectLiteral>(entity: EntityTarget<T>, items: T[]): void;
}

/**
 * Plain SQL for the few statements on the hot path (an agent_status lookup, audit appends): they run
 * on every call of every client, and TypeORM's query builder costs more than the database work
 * there. SQL is written with `?` placeholders (rewritten to `$n` for PostgreSQL); SQLite statements
 * are prepared once. Rows are hydrated with the entity's own column metadata and driver conversions,
 * so the entity stays the single description of a table.
 */
export class HotPathSql {
  private readonly sqlite: SqliteConnection | null;

  constructor(
    private readonly dataSource: DataSource,
    /** Inside a transaction: PostgreSQL must use the transaction's connection (SQLite has only one). */
    private readonly manager?: EntityManager,
    private readonly statements = new Map<string, Statement>(),
  ) {
    this.sqlite = dataSource.options.type === 'better-sqlite3' ? (dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection : null;
  }

  /** The same executor (and prepared statements) bound to a transaction's manager. */
  within(manager: EntityManager): HotPathSql {
    return new HotPathSql(this.dataSource, manager, this.statements);
  }

  /** Rows of `entity` matching `where` (column = value, ANDed), hydrated as entities. */
  async select<T extends ObjectLiteral>(entity: EntityTarget<T>, where: Partial<Record<keyof T & string, unknown>>): Promise<T[]> {
    const metadata = this.dataSource.getMetadata(entity);
    const conditions = Object.keys(where).map((key) => `${metadata.findColumnWithPropertyName(key)!.databaseName} = ?`);
    const rows = (await this.all(`SELECT * FROM ${metadata.tableName} WHERE ${conditions.join(' AND ')}`, Object.values(where))) as Record<string, unknown>[];
    return rows.map((row) => this.hydrate(entity, row));
  }

  hydrate<T extends ObjectLiteral>(entity: EntityTarget<T>, row: Record<string, unknown>): T {
    const metadata = this.dataSource.getMetadata(entity);
    const item = metadata.create() as Record<string, unknown>;
    for (const column of metadata.columns) item[column.propertyName] = this.dataSource.driver.prepareHydratedValue(row[column.databaseName], column);
    return item as T;
  }

  /** One multi-row INSERT of `items` (columns from the entity metadata; generated columns omitted). */
  async insert<T extends ObjectLiteral>(entity: EntityTarget<T>, items: T[]): Promise<void> {
    if (items.length === 0) return;
    const { sql, params } = this.insertStatement(entity, items);
    await this.run(sql, params);
  }

  get isSqlite(): boolean {
    return this.sqlite !== null;
  }

  /**
   * SQLite only: `fn` inside one BEGIN IMMEDIATE transaction run synchronously, so no other statement
   * on the (single) connection can slip into it, and without TypeORM's per-transaction overhead.
   */
  immediate<T>(fn: (sql: SyncSql) => T): T {
    return this.transactionRunner().immediate(fn) as T;
  }

  private runner: ImmediateTransaction | null = null;

  /** Built once: better-sqlite3 prepares BEGIN/COMMIT/ROLLBACK for each transaction function it makes. */
  private transactionRunner(): ImmediateTransaction {
    if (this.runner) return this.runner;
    const sync: SyncSql = {
      all: (sql, params = []) => this.prepared(sql).all(...params),
      run: (sql, params = []) => void this.prepared(sql).run(...params),
      insert: (entity, items) => {
        const { sql, params } = this.insertStatement(entity, items);
        this.prepared(sql).run(...params);
      },
    };
    this.runner = this.sqlite!.transaction((fn: (sql: SyncSql) => unknown) => fn(sync));
    return this.runner;
  }

  private insertStatement<T extends ObjectLiteral>(entity: EntityTarget<T>, items: T[]) {
    const metadata = this.dataSource.getMetadata(entity);
    const columns = metadata.columns.filter((column) => !column.isGenerated);
    const row = `(${columns.map(() => '?').join(', ')})`;
    const params = items.flatMap((item) => columns.map((column) => this.dataSource.driver.preparePersistentValue(item[column.propertyName], column)));
    return { sql: `INSERT INTO ${metadata.tableName} (${columns.map((column) => column.databaseName).join(', ')}) VALUES ${items.map(() => row).join(', ')}`, params };
  }

  async all(sql: string, params: unknown[] = []): Promise<unknown[]> {
    if (this.sqlite) return this.prepared(sql).all(...params);
    return (this.manager ?? this.dataSource).query(toPostgres(sql), params);
  }

  async run(sql: string, params: unknown[] = []): Promise<void> {
    if (this.sqlite) this.prepared(sql).run(...params);
    else await (this.manager ?? this.dataSource).query(toPostgres(sql), params);
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

function toPostgres(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}
