import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { DataSource } from 'typeorm';

type SqliteConnection = { pragma(sql: string): unknown; name: string; memory: boolean };

/**
 * The pause between two background checkpoints. It is a pause after each one, not a period: on a slow
 * disk a checkpoint can take longer than this, and back-to-back checkpoints would hold SQLite's
 * checkpoint lock all the time, so the writer's backstop checkpoint (which gives up when it finds the
 * lock taken) would never get in and the WAL would grow past it.
 */
const CHECKPOINT_PAUSE_MS = 200;
/** SQLite's own default, restored if the background checkpointer stops. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/**
 * The writer's own checkpoint, as a backstop (64 MiB of 4 KiB pages). Under a sustained stream of
 * commits the background checkpoints never catch up with the very last frame, and SQLite restarts the
 * WAL only once every frame is copied: without it the WAL would grow as long as the load lasts. The
 * writer then finds almost everything copied already, so its checkpoint is a short tail and an fsync.
 */
const BACKSTOP_AUTOCHECKPOINT_PAGES = 16_384;
/** A WAL file grown larger than this (by one large transaction) is cut back to it once reset. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * A second connection, on a worker thread, that runs PASSIVE checkpoints (it never waits for, nor
 * blocks, the writer or readers). By default SQLite checkpoints inside whichever commit crosses 1 000
 * WAL pages: that commit, on the event loop, copies the pages into the database file and fsyncs it,
 * a stall of tens of milliseconds for every request queued behind it, and hundreds after a request with
 * images. Here the writer checkpoints only as a backstop at 64 MiB of WAL, and finds the pages copied
 * already. Durability is unchanged: committed transactions are in the WAL either way (ADR 0007).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
let timer;
const checkpointLater = () => {
  timer = setTimeout(() => {
    db.pragma('wal_checkpoint(PASSIVE)');
    checkpointLater();
  }, workerData.pauseMs);
};
checkpointLater();
parentPort.once('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

@Injectable()
export class WalCheckpointer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WalCheckpointer.name);
  private worker: Worker | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  onApplicationBootstrap(): void {
    const connection = this.sqliteFile();
    if (!connection) return;
    connection.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
    connection.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file: connection.name, pauseMs: CHECKPOINT_PAUSE_MS } });
    this.worker.unref();
    this.worker.once('error', (error) => {
      this.logger.warn(`background WAL checkpoints stopped (${error.message}); checkpointing on commit again`);
      this.worker = null;
      connection.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = null;
    const exited = new Promise((done) => worker.once('exit', done));
    worker.postMessage('stop');
    await exited;
  }

  /** The better-sqlite3 connection of a file database; null for PostgreSQL and in-memory SQLite. */
  private sqliteFile(): SqliteConnection | null {
    if (this.dataSource.options.type !== 'better-sqlite3') return null;
    const connection = (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
    return connection.memory ? null : connection;
  }
}
