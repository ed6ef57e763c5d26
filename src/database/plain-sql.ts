import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import type { EntityMetadata } from 'typeorm/metadata/EntityMetadata.js';
import { sqlClock, type SqlClock } from './sql-clock.js';

type Statement = { all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
type SqliteConnection = {
  prepare(sql: string): Statement;
  transaction<A extends unknown[], T>(fn: (...args: A) => T): { immediate(...args: A): T };
};
type ImmediateTransaction = { immediate<T>(steps: TransactionSteps<T>): T };

/**
 * One statement of a transaction; `all` answers with its rows, the others with none. An `all` of a
 * unit of work may `check` its rows and throw, which rolls the transaction back (a guard).
 */
export type SqlStep =
  | { op: 'all'; sql: string; params: unknown[]; check?: (rows: unknown[]) => void }
  | { op: 'run'; sql: string; params: unknown[] }
  | { op: 'insert'; entity: EntityTarget<ObjectLiteral>; items: ObjectLiteral[] };

/**
 * A transaction written once as a generator: it yields each statement and receives that statement's
 * rows. PlainSql.transaction runs it synchronously on SQLite and asynchronously on PostgreSQL.
 */
export type TransactionSteps<T> = Generator<SqlStep, T, unknown[]>;

export const sqlStep = {
  all: (sql: string, params: unknown[] = []): SqlStep => ({ op: 'all', sql, params }),
  run: (sql: string, params: unknown[] = []): SqlStep => ({ op: 'run', sql, params }),
  insert: (entity: EntityTarget<ObjectLiteral>, items: ObjectLiteral[]): SqlStep => ({ op: 'insert', entity, items }),
};

/**
 * The one way repositories and the unit of work reach the database (built once, a provider of
 * DatabaseModule). Plain SQL: the hot path (an agent_status lookup, audit appends) runs on every call
 * of every client, where TypeORM's query builder costs more than the database work, and one style for
 * the rare paths too keeps each repository readable as SQL. SQL is written with `?` placeholders
 * (rewritten to `$n` for PostgreSQL); SQLite statements are prepared once. Rows are hydrated with the
 * entity's own column metadata and driver conversions, so the entity stays the single description of
 * a table.
 */
export class PlainSql {
  private readonly sqlite: SqliteConnection | null;
  /** Which SQL the database speaks, for the few expressions that differ between the two (JSON access). */
  readonly dialect: 'sqlite' | 'postgres';
  /** Database time, for leases that must compare across replicas. */
  readonly clock: SqlClock;

  constructor(
    private readonly dataSource: DataSource,
    /** Inside a transaction: PostgreSQL must use the transaction's connection (SQLite has only one). */
    private readonly manager?: EntityManager,
    private readonly statements = new Map<string, Statement>(),
    /** The database's own clock unless a test gives another (test/support/manual-clock.ts). */
    clock?: SqlClock,
  ) {
    this.sqlite = dataSource.options.type === 'better-sqlite3' ? (dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection : null;
    this.dialect = this.sqlite ? 'sqlite' : 'postgres';
    this.clock = clock ?? sqlClock(dataSource);
  }

  /** Rows of `entity` matching `where` (column = value, ANDed), hydrated as entities. */
  async select<T extends ObjectLiteral>(entity: EntityTarget<T>, where: Partial<Record<keyof T & string, unknown>>): Promise<T[]> {
    const metadata = this.dataSource.getMetadata(entity);
    const conditions = Object.keys(where).map((key) => `${metadata.findColumnWithPropertyName(key)!.databaseName} = ?`);
    return this.entities(entity, `SELECT * FROM ${metadata.tableName} WHERE ${conditions.join(' AND ')}`, Object.values(where));
  }

  /** The rows of a query of `entity`'s table (`SELECT *`, or some of its columns), hydrated as entities. */
  async entities<T extends ObjectLiteral>(entity: EntityTarget<T>, sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.all(sql, params)).map((row) => this.hydrate(entity, row));
  }

  hydrate<T extends ObjectLiteral>(entity: EntityTarget<T>, row: Record<string, unknown>): T {
    const metadata = this.dataSource.getMetadata(entity);
    const item = metadata.create() as Record<string, unknown>;
    for (const column of metadata.columns) item[column.propertyName] = this.dataSource.driver.prepareHydratedValue(row[column.databaseName], column);
    return item as T;
  }

  /**
   * Inserts `items` (columns from the entity metadata; generated columns omitted): multi-row INSERTs
   * of at most INSERT_CHUNK rows, to save round trips to PostgreSQL within its parameter limit.
   */
  async insert<T extends ObjectLiteral>(entity: EntityTarget<T>, items: T[]): Promise<void> {
    for (let start = 0; start < items.length; start += INSERT_CHUNK) {
      const { sql, params } = this.insertStatement(entity, items.slice(start, start + INSERT_CHUNK));
      await this.run(sql, params);
    }
  }

  /**
   * Runs `steps` in one transaction. SQLite: one BEGIN IMMEDIATE transaction run synchronously, so no
   * other statement on its single connection can slip in and two transactions never overlap (TypeORM's
   * async transactions on that connection would), and without TypeORM's per-transaction overhead.
   * PostgreSQL: a TypeORM transaction on its own pooled connection.
   */
  async transaction<T>(steps: () => TransactionSteps<T>): Promise<T> {
    if (this.sqlite) return this.immediateTransaction().immediate(steps());
    return this.dataSource.transaction(async (manager) => {
      const sql = new PlainSql(this.dataSource, manager, this.statements, this.clock);
      const generator = steps();
      let next = generator.next();
      while (!next.done) next = generator.next(await sql.execute(next.value));
      return next.value;
    });
  }

  private runner: ImmediateTransaction | null = null;

  /** Built once: better-sqlite3 prepares BEGIN/COMMIT/ROLLBACK for each transaction function it makes. */
  private immediateTransaction(): ImmediateTransaction {
    this.runner ??= this.sqlite!.transaction(<T>(steps: TransactionSteps<T>): T => {
      let next = steps.next();
      while (!next.done) next = steps.next(this.executeNow(next.value));
      return next.value;
    }) as ImmediateTransaction;
    return this.runner;
  }

  /** SQLite: one step, synchronously. Inserts go row by row: in-process, there are no round trips to save, and one statement shape stays prepared. */
  private executeNow(step: SqlStep): unknown[] {
    if (step.op === 'all') return this.prepared(step.sql).all(...step.params);
    if (step.op === 'run') this.prepared(step.sql).run(...step.params);
    else
      for (const item of step.items) {
        const { sql, params } = this.insertStatement(step.entity, [item]);
        this.prepared(sql).run(...params);
      }
    return [];
  }

  private async execute(step: SqlStep): Promise<unknown[]> {
    // A guard's rows from an UPDATE … RETURNING (a counter, a row locked by a no-op update) are its changed rows.
    if (step.op === 'all') return this.changed(step.sql, step.params);
    if (step.op === 'run') await this.run(step.sql, step.params);
    else await this.insert(step.entity, step.items);
    return [];
  }

  private insertStatement<T extends ObjectLiteral>(entity: EntityTarget<T>, items: T[]) {
    const { table, columns, row } = this.insertShape(entity);
    const params = items.flatMap((item) => columns.map((column): unknown => this.dataSource.driver.preparePersistentValue(item[column.propertyName], column)));
    return { sql: `INSERT INTO ${table} VALUES ${items.map(() => row).join(', ')}`, params };
  }

  /** An entity's insertable columns and SQL, worked out once per entity (one call per row on the accept path). */
  private insertShape(entity: EntityTarget<ObjectLiteral>): InsertShape {
    const metadata = this.dataSource.getMetadata(entity);
    let shape = INSERT_SHAPES.get(metadata);
    if (!shape) {
      const columns = metadata.columns.filter((column) => !column.isGenerated);
      const table = `${metadata.tableName} (${columns.map((column) => column.databaseName).join(', ')})`;
      shape = { table, columns, row: `(${columns.map(() => '?').join(', ')})` };
      INSERT_SHAPES.set(metadata, shape);
    }
    return shape;
  }

  /** The rows of a query, as the driver returns them (the caller names their shape). */
  async all<Row = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<Row[]> {
    if (this.sqlite) return this.prepared(sql).all(...params) as Row[];
    return (this.manager ?? this.dataSource).query(toPostgres(sql), params);
  }

  async run(sql: string, params: unknown[] = []): Promise<void> {
    if (this.sqlite) this.prepared(sql).run(...params);
    else await (this.manager ?? this.dataSource).query(toPostgres(sql), params);
  }

  /**
   * An UPDATE or DELETE ending in `RETURNING …`: the rows it changed (their count is how many it changed); any
   * other statement: its rows. TypeORM answers an UPDATE or DELETE on PostgreSQL with `[rows, rowCount]`, told by
   * the command the server ran (a `WITH … UPDATE` too), so the answer's shape says which it is: a row is never an array.
   */
  async changed<Row = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<Row[]> {
    if (this.sqlite) return this.prepared(sql).all(...params) as Row[];
    const answer = await (this.manager ?? this.dataSource).query<Row[] | [Row[], number]>(toPostgres(sql), params);
    return isChangedRows(answer) ? answer[0] : answer;
  }

  /** `column = ?, …` for the given properties of `entity`, with the driver's conversions of their values. */
  assignments<T extends ObjectLiteral>(entity: EntityTarget<T>, values: Partial<T>): { sql: string; params: unknown[] } {
    const metadata = this.dataSource.getMetadata(entity);
    const columns = Object.keys(values).map((key) => metadata.findColumnWithPropertyName(key)!);
    return {
      sql: columns.map((column) => `${column.databaseName} = ?`).join(', '),
      params: columns.map((column): unknown => this.dataSource.driver.preparePersistentValue(values[column.propertyName], column)),
    };
  }

  private prepared(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.sqlite!.prepare(sql);
      // Bounded: only a handful of shapes exist (one per chunk size at most for inserts).
      if (this.statements.size < 256) this.statements.set(sql, statement);
    }
    return statement;
  }
}

interface InsertShape {
  /** `table (column, ...)` */
  table: string;
  columns: ColumnMetadata[];
  /** `(?, ?, ...)`, one placeholder per column */
  row: string;
}

const INSERT_SHAPES = new WeakMap<EntityMetadata, InsertShape>();

/** Rows per multi-row INSERT: 500 rows of the widest table stay far below PostgreSQL's 65 535 parameters. */
const INSERT_CHUNK = 500;

/** TypeORM's PostgreSQL answer to an UPDATE or DELETE, `[rows, rowCount]` (see `changed`). */
function isChangedRows<Row>(answer: Row[] | [Row[], number]): answer is [Row[], number] {
  return answer.length === 2 && Array.isArray(answer[0]) && typeof answer[1] === 'number';
}

function toPostgres(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}
