import { afterEach, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { CUT_KEY } from '../../src/audit/audit-bounds.js';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { AuditLogService, LIST_DETAIL_CHARS } from '../../src/audit/audit-log.service.js';
import { mapListedAuditEvent } from '../../src/admin/admin-views.js';
import { AuditRetention } from '../../src/audit/audit-retention.js';
import { AuditWriter } from '../../src/audit/audit-writer.js';
import { AuditService } from '../../src/audit/audit.service.js';
import { AuditRepository } from '../../src/audit/audit.repository.js';
import { PlainSql } from '../../src/database/plain-sql.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { validateConfig } from '../../src/config/agent-config.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import type { Caller } from '../../src/identity/caller.js';
import { ManualClock } from '../support/manual-clock.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const alice: Caller = { user: 'alice', groups: ['dev'], admin: false, transport: 'http', address: '10.0.0.7', client: 'e2e/1' };

describe.each<DatabaseKind>(['sqlite', 'postgres'])('hash-chained audit log on %s', (kind) => {
  const sources: DataSource[] = [];

  afterEach(async () => {
    for (const source of sources.splice(0)) await source.destroy();
  });

  async function open(database?: AppConfig['database']) {
    const config = validateConfig({ database: database ?? (await freshDatabase(kind)), audit: { checkpoint_every: 1000 } });
    const source = new DataSource(dataSourceOptions(config.database, [AuditEventEntity]));
    await source.initialize();
    sources.push(source);
    const sql = new PlainSql(source);
    const repository = new AuditRepository(sql);
    const clock = new ManualClock(Date.now());
    const audit = new AuditService(new AuditWriter(new UnitOfWork(sql), repository, config, new Metrics()), config, clock);
    return { config, source, audit, clock, log: new AuditLogService(repository), retention: new AuditRetention(repository, audit, config, new SchedulerRegistry(), clock) };
  }

  const write = (audit: AuditService, count: number, action = 'test.event') =>
    Promise.all(Array.from({ length: count }, (_, n) => audit.record({ caller: alice, action, outcome: 'ok', detail: { n } })));

  /** Writes `old` events, then, past the returned retention cutoff, `kept` more. */
  async function writeAcrossCutoff({ audit, clock }: { audit: AuditService; clock: ManualClock }, old: number, kept: number): Promise<Date> {
    await write(audit, old);
    const cutoff = new Date(clock.now() + 1000);
    clock.advance(1100);
    await write(audit, kept, 'kept');
    return cutoff;
  }

  it('numbers events without gaps and verifies; UPDATE and DELETE are refused by the database (T4.4)', async () => {
    const { source, audit, log } = await open();
    await write(audit, 50);
    expect(await log.verify()).toMatchObject({ ok: true, checked: 50, firstBadSeq: null, head: { seq: 50 } });
    await expect(source.query(`UPDATE audit_events SET actor = 'mallory' WHERE seq = 3`)).rejects.toThrow(/append-only/);
    await expect(source.query(`DELETE FROM audit_events WHERE seq = 3`)).rejects.toThrow(/append-only/);
  });

  it('reports the first broken sequence number after tampering (T4.2)', async () => {
    const { source, audit, log } = await open();
    await write(audit, 30);
    const bypass = async (sql: string) => {
      // What an attacker with database access does first: remove the guard.
      if (kind === 'sqlite') {
        await source.query('DROP TRIGGER IF EXISTS audit_events_no_update');
        await source.query('DROP TRIGGER IF EXISTS audit_events_no_delete');
      } else {
        await source.query('DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events');
      }
      await source.query(sql);
    };
    await bypass(`UPDATE audit_events SET detail = '{"n":999}' WHERE seq = 12`);
    expect(await log.verify()).toMatchObject({ ok: false, firstBadSeq: 12, reason: 'its content does not match its hash' });
  });

  it('detects a deleted middle event and a truncated tail', async () => {
    const { source, audit, log } = await open();
    await write(audit, 30);
    await source.query(kind === 'sqlite' ? 'DROP TRIGGER audit_events_no_delete' : 'DROP TRIGGER audit_events_append_only ON audit_events');
    await source.query('DELETE FROM audit_events WHERE seq = 7');
    expect(await log.verify()).toMatchObject({ ok: false, firstBadSeq: 7, reason: 'event 7 is missing' });
    await source.query('DELETE FROM audit_events WHERE seq >= 7');
    expect(await log.verify()).toMatchObject({ ok: false, firstBadSeq: 7, reason: 'the chain ends at 6 but the head is at 30' });
  });

  it('reports an event put beyond the head, which the writer never leaves', async () => {
    const { source, audit, log } = await open();
    await write(audit, 10);
    const [last] = await source.query('SELECT * FROM audit_events WHERE seq = 10');
    const columns = Object.keys(last);
    await source.query(
      `INSERT INTO audit_events (${columns.join(', ')}) VALUES (${columns.map((_, n) => (kind === 'sqlite' ? '?' : `$${n + 1}`)).join(', ')})`,
      columns.map((column) => (column === 'seq' ? 11 : last[column])),
    );
    expect(await log.verify()).toMatchObject({ ok: false, firstBadSeq: 11, reason: 'event 11 is beyond the head' });
  });

  /** Runs `meanwhile` right after the walk has read the head, before it reads any event. */
  function afterHeadRead(log: AuditLogService, meanwhile: () => Promise<unknown>) {
    const repository = (log as unknown as { repository: AuditRepository }).repository;
    const head = repository.head.bind(repository);
    let done = false;
    repository.head = async () => {
      const read = await head();
      if (!done) {
        done = true;
        await meanwhile();
      }
      return read;
    };
  }

  it('verifies a live log: events committed while the chain is walked belong to a later head', async () => {
    const { audit, log } = await open();
    await write(audit, 20);
    afterHeadRead(log, () => write(audit, 5, 'during.verify'));
    expect(await log.verify()).toMatchObject({ ok: true, checked: 20, head: { seq: 20 } });
    expect(await log.verify()).toMatchObject({ ok: true, checked: 25, head: { seq: 25 } });
  });

  it('walks again from the new anchor when a retention purge commits during the walk', async () => {
    const { audit, log, retention, clock } = await open();
    const cutoff = await writeAcrossCutoff({ audit, clock }, 10, 3);
    afterHeadRead(log, () => retention.purge(cutoff));
    expect(await log.verify()).toMatchObject({ ok: true, checked: 4, anchor: { seq: 10 }, head: { seq: 14 } });
  });

  // PostgreSQL reads are I/O and yield anyway; on SQLite every read is synchronous.
  (kind === 'sqlite' ? it : it.skip)('lets other requests run between the pages of a walk', async () => {
    const { audit, log } = await open();
    await write(audit, 2500);
    const order: string[] = [];
    const walk = log.verify().then((verification) => order.push(`verified ${verification.checked}`));
    setImmediate(() => order.push('another request'));
    await walk;
    expect(order).toEqual(['another request', 'verified 2500']);
  });

  it('detects a tail cut together with the head, which the chain alone cannot, against a logged checkpoint', async () => {
    const { source, audit, log } = await open();
    await write(audit, 30);
    const [logged] = await source.query<{ seq: number; hash: string }[]>(`SELECT seq, hash FROM audit_events WHERE seq = 30`);
    const [earlier] = await source.query<{ seq: number; hash: string }[]>(`SELECT seq, hash FROM audit_events WHERE seq = 20`);
    expect(await log.verify({ seq: 30, hash: logged.hash })).toMatchObject({ ok: true });
    // An attacker with database access removes the last ten events and moves the head back to match.
    await source.query(kind === 'sqlite' ? 'DROP TRIGGER audit_events_no_delete' : 'DROP TRIGGER audit_events_append_only ON audit_events');
    await source.query('DELETE FROM audit_events WHERE seq > 20');
    await source.query(kind === 'sqlite' ? 'UPDATE audit_head SET seq = 20, hash = ? WHERE id = 1' : 'UPDATE audit_head SET seq = 20, hash = $1 WHERE id = 1', [earlier.hash]);
    expect(await log.verify()).toMatchObject({ ok: true, checked: 20 });
    expect(await log.verify({ seq: 30, hash: logged.hash })).toMatchObject({
      ok: false,
      firstBadSeq: 21,
      reason: 'the logged checkpoint 30 is beyond the head 20: events were removed from the end',
    });
    expect(await log.verify({ seq: 20, hash: earlier.hash })).toMatchObject({ ok: true });
    expect(await log.verify({ seq: 20, hash: logged.hash })).toMatchObject({ ok: false, firstBadSeq: 20, reason: 'event 20 does not match the logged checkpoint' });
  });

  // Replicas share PostgreSQL; two SQLite connections in one thread would only block each other.
  (kind === 'postgres' ? it : it.skip)('keeps one gapless chain with two replicas writing at once (T4.3)', async () => {
    const first = await open();
    const second = await open(first.config.database);
    await Promise.all([write(first.audit, 400, 'a'), write(second.audit, 400, 'b')]);
    expect(await first.log.verify()).toMatchObject({ ok: true, checked: 800, head: { seq: 800 } });
  });

  it('pages exactly by cursor while events keep being written, with filters ANDed (T4.8)', async () => {
    const { audit, log } = await open();
    await write(audit, 120, 'page.me');
    await write(audit, 30, 'other');
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await log.search({ action: 'page.me', actor: 'alice' }, 25, cursor);
      seen.push(...page.items.map(({ event }) => Number(event.seq)));
      await write(audit, 10, 'page.me');
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 120 }, (_, n) => 120 - n));
    expect((await log.search({ action: 'page.me', actor: 'bob' }, 25, null)).items).toEqual([]);
    await expect(log.search({}, 10, 'garbage')).rejects.toThrow(/cursor/);
  });

  it('purges by retention and still verifies from the new anchor (T4.9)', async () => {
    const { source, audit, log, retention, clock } = await open();
    const cutoff = await writeAcrossCutoff({ audit, clock }, 20, 5);
    expect(await retention.purge(cutoff)).toBe(20);
    const remaining = await source.query('SELECT COUNT(*) AS n FROM audit_events');
    expect(Number(remaining[0].n)).toBe(6);
    const verification = await log.verify();
    expect(verification).toMatchObject({ ok: true, checked: 6, anchor: { seq: 20 }, head: { seq: 26 } });
    const [{ event: purged }] = (await log.search({ action: 'audit.purged' }, 1, null)).items;
    expect(JSON.parse(purged.detail)).toMatchObject({ events: 20, toSeq: 20 });
    // Checkpoints: the anchor's is still compared; one before it was purged with its event.
    expect(await log.verify({ seq: 20, hash: verification.anchor.hash })).toMatchObject({ ok: true });
    expect(await log.verify({ seq: 20, hash: 'f'.repeat(64) })).toMatchObject({ ok: false, firstBadSeq: 20 });
    expect(await log.verify({ seq: 10, hash: 'f'.repeat(64) })).toMatchObject({ ok: true });
  });

  it('purges in chunks, one transaction each, moving the anchor with each', async () => {
    const { source, audit, log, retention, clock } = await open();
    const cutoff = await writeAcrossCutoff({ audit, clock }, 25, 2);
    // Each purgeChunk is one transaction.
    const repository = (retention as unknown as { repository: AuditRepository }).repository;
    const purgeChunk = repository.purgeChunk.bind(repository);
    const anchors: number[] = [];
    repository.purgeChunk = async (through, chunkSize) => {
      const result = await purgeChunk(through, chunkSize);
      anchors.push(Number((await source.query('SELECT anchor_seq FROM audit_head WHERE id = 1'))[0].anchor_seq));
      return result;
    };
    expect(await retention.purge(cutoff, 10)).toBe(25);
    expect(anchors).toEqual([10, 20, 25]);
    expect(await log.verify()).toMatchObject({ ok: true, checked: 3, anchor: { seq: 25 }, head: { seq: 28 } });
    const purges = (await log.search({ action: 'audit.purged' }, 10, null)).items;
    expect(purges.map(({ event }) => JSON.parse(event.detail))).toEqual([expect.objectContaining({ events: 25, toSeq: 25 })]);
  });

  it('lists bounded pages, and verifies and exports whole events, when old unbounded events are stored', async () => {
    const { config, source, log } = await open();
    // What an event could hold before details were bounded: written through the writer, so the chain holds.
    const sql = new PlainSql(source);
    const writer = new AuditWriter(new UnitOfWork(sql), new AuditRepository(sql), config, new Metrics());
    const big = JSON.stringify({ arguments: { ['x'.repeat(600_000)]: 1 } });
    await Promise.all(
      Array.from({ length: 55 }, () => {
        const event = Object.assign(new AuditEventEntity(), {
          at: new Date().toISOString(),
          actor: 'mallory',
          groups: null,
          source: null,
          transport: 'http',
          client: null,
          action: 'tools/call agent_run',
          outcome: 'rejected',
          taskId: null,
          sessionId: null,
          detail: big,
        });
        return writer.append(event);
      }),
    );
    const page = await log.search({}, 50, null);
    expect(page.items).toHaveLength(50);
    expect(Math.max(...page.items.map(({ event }) => event.detail.length))).toBeLessThanOrEqual(LIST_DETAIL_CHARS);
    const [listed] = page.items.map(mapListedAuditEvent);
    expect(listed.detail).toEqual({ [CUT_KEY]: `[cut: detail of ${big.length} chars; GET /admin/audit/${listed.seq} returns it whole]`, preview: big.slice(0, LIST_DETAIL_CHARS) });
    expect((await log.get(listed.seq))!.detail).toBe(big);
    let exported = 0;
    for await (const event of log.stream({})) exported += event.detail === big ? 1 : 0;
    expect(exported).toBe(55);
    expect(await log.verify()).toMatchObject({ ok: true, checked: 55 });
  });

  it('redacts secrets and never stores image data (T4.5)', async () => {
    const { audit, log } = await open();
    const canaries = ['AKIAIOSFODNN7EXAMPLE', 'ghp_0123456789abcdefghijABCDEFGHIJ012345', 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl', 'hunter2'];
    await audit.record({
      caller: alice,
      action: 'tools/call agent_run',
      outcome: 'ok',
      detail: { request: `use ${canaries[0]} and ${canaries[1]} with Bearer ${canaries[2]}; password=hunter2`, url: 'postgres://app:s3cretpass@db/x' },
    });
    const [{ event }] = (await log.search({}, 1, null)).items;
    for (const canary of [...canaries, 's3cretpass']) expect(event.detail).not.toContain(canary);
    expect(event.detail).toContain('[REDACTED AWS KEY]');
  });
});
