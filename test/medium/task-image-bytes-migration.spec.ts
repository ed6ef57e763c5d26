import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { validateConfig } from '../../src/config/agent-config.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, MIGRATIONS } from '../../src/database/data-source-options.js';
import { TaskImageBytes1764979200000 } from '../../src/database/migrations/1764979200000-task-image-bytes.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

describe.each<DatabaseKind>(['sqlite', 'postgres'])('task image bytes migration on %s', (kind) => {
  const sources: DataSource[] = [];
  afterEach(async () => {
    for (const source of sources.splice(0)) if (source.isInitialized) await source.destroy();
  });

  async function open(database: AppConfig['database'], migrations: typeof MIGRATIONS) {
    const source = new DataSource({ ...dataSourceOptions(database), migrations, migrationsRun: false });
    await source.initialize();
    sources.push(source);
    await source.runMigrations();
    return source;
  }
  /** `?` placeholders, numbered for PostgreSQL. */
  const sql = (text: string) => {
    let n = 0;
    return kind === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
  };

  it('turns stored Base64 into the same bytes, in batches, and back again on revert', async () => {
    const config = validateConfig({ database: await freshDatabase(kind) });
    const images = Array.from({ length: 37 }, (_, n) => randomBytes(n === 5 ? 300_000 : 1 + n * 7));
    // The schema as it stood before this migration, and then up to it (later migrations are not its concern).
    const upTo = MIGRATIONS.findIndex((migration) => migration === TaskImageBytes1764979200000);
    const before = await open(config.database, MIGRATIONS.slice(0, upTo));
    const at = '2026-12-02T00:00:00.000Z';
    await before.query(sql('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)'), ['s1', 'alice', at]);
    await before.query(sql("INSERT INTO tasks (id, session_id, owner, request, status, created_at, updated_at) VALUES (?, ?, 'alice', 'r', 'queued', ?, ?)"), ['t1', 's1', at, at]);
    for (const [position, image] of images.entries()) {
      await before.query(sql('INSERT INTO task_images (task_id, position, mime_type, bytes, sha256, data_base64) VALUES (?, ?, ?, ?, ?, ?)'), [
        't1',
        position,
        'image/png',
        image.length,
        'x'.repeat(64),
        image.toString('base64'),
      ]);
    }
    await before.destroy();

    const after = await open(config.database, MIGRATIONS.slice(0, upTo + 1));
    const rows = await after.query<{ position: number; data: Buffer }[]>('SELECT position, data FROM task_images ORDER BY position');
    expect(rows.map((row) => Buffer.compare(row.data, images[row.position]))).toEqual(images.map(() => 0));

    await after.undoLastMigration();
    const reverted = await after.query<{ position: number; data_base64: string }[]>('SELECT position, data_base64 FROM task_images ORDER BY position');
    expect(reverted.map((row) => row.data_base64)).toEqual(images.map((image) => image.toString('base64')));
  });
});
