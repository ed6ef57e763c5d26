import { afterEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { validateConfig } from '../../src/config/agent-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { WalCheckpointer } from '../../src/database/wal-checkpointer.js';
import { freshDatabase } from '../support/databases.js';
import { pollUntil } from '../support/poll.js';

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Sessions found in the database file alone, without its WAL: what has been checkpointed. null when the copy caught
 * a checkpoint half-way through writing the file (SQLite then finds it malformed): a copy does not take SQLite's locks.
 */
function sessionsInMainFile(path: string): number | null {
  const dir = mkdtempSync(join(tmpdir(), 'oam-main-'));
  const copy = join(dir, 'copy.sqlite');
  copyFileSync(path, copy);
  const db = new Database(copy, { readonly: true });
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE name = 'sessions'").get();
    return table ? (db.prepare('SELECT COUNT(*) AS n FROM sessions').get() as { n: number }).n : 0;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CORRUPT') return null;
    throw error;
  } finally {
    db.close();
    // The probe runs in a poll: each copy goes at once, not with the run.
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('background WAL checkpoints (SQLite)', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open(withCheckpointer: boolean) {
    const config = validateConfig({ database: await freshDatabase('sqlite') });
    const source = new DataSource(dataSourceOptions(config.database));
    await source.initialize();
    cleanups.push(() => source.destroy());
    if (withCheckpointer) {
      const checkpointer = new WalCheckpointer(source);
      checkpointer.onApplicationBootstrap();
      cleanups.push(() => checkpointer.onApplicationShutdown());
    }
    const path = (config.database as { path: string }).path;
    const insert = async (count: number) => {
      for (let n = 0; n < count; n++) await source.query(`INSERT INTO sessions (id, owner, created_at) VALUES ('s-${n}', 'alice', '2026-12-02T00:00:00.000Z')`);
    };
    return { source, path, insert };
  }

  it('copies commits into the database file off the event loop, where commits below 1 000 pages never would', async () => {
    const without = await open(false);
    await without.insert(20);
    // Nothing to wait for: three background checkpoint pauses pass, and no checkpoint may have come.
    await pause(600);
    expect(sessionsInMainFile(without.path)).toBe(0);

    const withIt = await open(true);
    await withIt.insert(20);
    // The background checkpoint comes within its pause (200 ms) on a quiet machine; under load, when it comes.
    await pollUntil(async () => (sessionsInMainFile(withIt.path) === 20 ? true : undefined), 'the 20 sessions in the database file', {
      everyMs: 100,
      lastSeen: () => `${sessionsInMainFile(withIt.path)} sessions`,
    });
    // The writer checkpoints only as a backstop, at 64 MiB of WAL instead of SQLite's 4 MiB.
    const connection = (withIt.source.driver as unknown as { databaseConnection: Database.Database }).databaseConnection;
    expect(connection.pragma('wal_autocheckpoint', { simple: true })).toBe(16_384);
  });

  it('keeps the WAL bounded under a sustained stream of commits, which background checkpoints alone never finish', async () => {
    const { source, path } = await open(true);
    const connection = (source.driver as unknown as { databaseConnection: Database.Database }).databaseConnection;
    connection.exec('CREATE TABLE filler (data BLOB)');
    const insert = connection.prepare('INSERT INTO filler (data) VALUES (?)');
    const row = Buffer.alloc(128 * 1024, 7);
    let largest = 0;
    // 256 MiB in 2 048 commits, back to back: without the backstop the WAL holds all of it. With it, the
    // WAL restarts near 64 MiB; it passes that by what is committed while a background checkpoint holds
    // the checkpoint lock and the writer's backstop gives way (20 MiB on a busy CI machine, 45 MiB here
    // under a competing stream of direct disk writes), hence the margin.
    for (let n = 0; n < 2048; n++) {
      insert.run(row);
      if (n % 16 === 0) largest = Math.max(largest, statSync(`${path}-wal`).size);
    }
    expect(largest).toBeLessThan(160 * 1024 * 1024);
  });

  it('stops its worker on shutdown, and the database closes cleanly after it', async () => {
    const { source, path, insert } = await open(true);
    await insert(5);
    const checkpointer = cleanups.pop()!;
    await checkpointer();
    await source.destroy();
    cleanups.pop();
    expect(sessionsInMainFile(path)).toBe(5);
  });
});
