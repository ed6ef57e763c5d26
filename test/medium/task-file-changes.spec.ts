import { afterEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { TaskFileChangeEntity } from '../../src/agent/task-file-change.entity.js';
import { TaskStepEntity } from '../../src/agent/task-step.entity.js';
import { TraceRepository, type ChangedFile, type StepRecord } from '../../src/agent/trace.repository.js';
import { validateConfig } from '../../src/config/agent-config.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions, MIGRATIONS } from '../../src/database/data-source-options.js';
import { TaskFileChanges1765612800021 } from '../../src/database/migrations/1765612800021-task-file-changes.js';
import { PlainSql } from '../../src/database/plain-sql.js';
import { TaskReadModels, taskReadModel } from '../../src/queue/task-read-model.js';
import { TaskEntity } from '../../src/queue/task.entity.js';
import { SessionEntity } from '../../src/sessions/session.entity.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const AT = '2026-12-04T10:00:00.000Z';
const id = (prefix: string, n: number) => `${prefix}0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const S1 = id('1', 1);
const S2 = id('2', 2);
const S3 = id('3', 3);
const T1 = id('a', 1);
const T2 = id('b', 2);
const T3 = id('c', 3);
/** Each Task's session and owner, as the queue hands them to its run (and the seed stores them). */
const SCOPES = { [T1]: { sessionId: S1, owner: 'alice' }, [T2]: { sessionId: S2, owner: 'alice' }, [T3]: { sessionId: S3, owner: 'bob' } };

describe.each<DatabaseKind>(['sqlite', 'postgres'])('task_file_changes on %s', (kind) => {
  const sources: DataSource[] = [];
  afterEach(async () => {
    for (const source of sources.splice(0)) if (source.isInitialized) await source.destroy();
  });

  const entities = [SessionEntity, TaskEntity, TaskStepEntity, TaskFileChangeEntity];
  async function open(database: AppConfig['database'], migrations: typeof MIGRATIONS) {
    const source = new DataSource({ ...dataSourceOptions(database, entities), migrations, migrationsRun: false });
    await source.initialize();
    sources.push(source);
    await source.runMigrations();
    return source;
  }

  /** Alice has sessions S1 and S2, Bob S3; one Task each (T1 in S1, T2 in S2, T3 in S3). */
  async function seed(sql: PlainSql) {
    for (const [session, owner] of [
      [S1, 'alice'],
      [S2, 'alice'],
      [S3, 'bob'],
    ]) {
      await sql.run('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)', [session, owner, AT]);
    }
    for (const [task, { sessionId: session, owner }] of Object.entries(SCOPES)) {
      await sql.run("INSERT INTO tasks (id, session_id, owner, request, status, created_at, updated_at) VALUES (?, ?, ?, 'r', 'completed', ?, ?)", [task, session, owner, AT, AT]);
    }
  }

  const step = (taskId: string, fields: Partial<StepRecord>): StepRecord => ({
    taskId,
    subtask: '',
    kind: 'file_op',
    name: 'write_file',
    outcome: 'ok',
    durationMs: 1,
    startedAt: AT,
    detail: {},
    ...fields,
  });
  const write = (taskId: string, path: string, created = true, bytes = path.length) => step(taskId, { detail: { arguments: { path, content: '…' }, path, bytes, created } });

  /** One step of its Task's scope (SCOPES). */
  const append = (trace: TraceRepository, record: StepRecord) => trace.append(record, SCOPES[record.taskId]);

  const changes = (sql: PlainSql) =>
    sql.entities(TaskFileChangeEntity, 'SELECT * FROM task_file_changes ORDER BY seq').then((rows) => rows.map(({ seq: _seq, ...change }) => change));

  it('fills the table from the file_op steps stored before it, in their order, and drops it on revert', async () => {
    const database = validateConfig({ database: await freshDatabase(kind) }).database;
    const upTo = MIGRATIONS.findIndex((migration) => migration === TaskFileChanges1765612800021);
    const before = await open(database, MIGRATIONS.slice(0, upTo));
    const sql = new PlainSql(before);
    await seed(sql);
    const raw = (taskId: string, kindOf: string, outcome: string, detail: string, at = AT) =>
      sql.run("INSERT INTO task_steps (task_id, kind, name, outcome, detail, started_at) VALUES (?, ?, 'x', ?, ?, ?)", [taskId, kindOf, outcome, detail, at]);
    await raw(T1, 'model_call', 'ok', '{"round":1}');
    await raw(T1, 'file_op', 'ok', '{"arguments":{"path":"a.txt"},"path":"a.txt","bytes":5,"created":true}', '2026-12-04T10:00:01.000Z');
    // Written before NULs were replaced: PostgreSQL's json would refuse this document as it stands.
    await raw(T1, 'file_op', 'ok', '{"arguments":{"content":"x\\u0000y"},"path":"b.txt","bytes":3,"created":false}', '2026-12-04T10:00:02.000Z');
    await raw(T1, 'tool_call', 'ok', '{"arguments":{"path":"c.txt"}}');
    await raw(T2, 'file_op', 'ok', '{"path":"a.txt","undoOf":"' + T1 + '"}', '2026-12-04T10:00:03.000Z');
    await raw(T2, 'file_op', 'ok', '{"arguments":{}}');
    await raw(T3, 'file_op', 'ok', '{"path":"dir/d.md","bytes":12,"created":true}', '2026-12-04T10:00:04.000Z');
    await before.destroy();

    const after = await open(database, MIGRATIONS.slice(0, upTo + 1));
    const migrated = new PlainSql(after);
    expect(await changes(migrated)).toEqual([
      { taskId: T1, sessionId: S1, owner: 'alice', path: 'a.txt', kind: 'created', bytes: 5, changedAt: '2026-12-04T10:00:01.000Z' },
      { taskId: T1, sessionId: S1, owner: 'alice', path: 'b.txt', kind: 'modified', bytes: 3, changedAt: '2026-12-04T10:00:02.000Z' },
      { taskId: T2, sessionId: S2, owner: 'alice', path: 'a.txt', kind: 'restored', bytes: null, changedAt: '2026-12-04T10:00:03.000Z' },
      { taskId: T3, sessionId: S3, owner: 'bob', path: 'dir/d.md', kind: 'created', bytes: 12, changedAt: '2026-12-04T10:00:04.000Z' },
    ]);
    // Old Tasks keep their deliverables through the read model.
    const files = await new TaskReadModels(new TraceRepository(migrated)).allWithFiles([T1, T2, T3].map((task) => taskReadModel(Object.assign(new TaskEntity(), { id: task }))));
    expect(files.map((task) => task.files)).toEqual([
      [
        { path: 'a.txt', change: 'created', bytes: 5 },
        { path: 'b.txt', change: 'modified', bytes: 3 },
      ],
      [{ path: 'a.txt', change: 'restored', bytes: null }],
      [{ path: 'dir/d.md', change: 'created', bytes: 12 }],
    ]);

    await after.undoLastMigration();
    await expect(after.query('SELECT COUNT(*) FROM task_file_changes')).rejects.toThrow(/task_file_changes/);
  });

  it('records a change with its trace step; a Task’s files once each, in the order it first changed them, first change, last size', async () => {
    const source = await open(validateConfig({ database: await freshDatabase(kind) }).database, MIGRATIONS);
    const sql = new PlainSql(source);
    await seed(sql);
    const trace = new TraceRepository(sql);
    await append(trace, step(T1, { kind: 'model_call', name: 'chat', detail: { round: 1 } }));
    await append(trace, write(T1, 'b.txt'));
    await append(trace, write(T1, 'a.txt'));
    await append(trace, write(T1, 'b.txt', false, 9));
    await append(trace, step(T1, { kind: 'tool_call', name: 'edit_file', outcome: 'error', detail: { path: 'c.txt', error: 'old_text not found' } }));
    await append(trace, step(T1, { kind: 'file_op', outcome: 'denied', detail: { arguments: { path: 'd.txt' } } }));
    await append(trace, step(T2, { name: 'undo', subtask: 'undo', detail: { path: 'z.txt', undoOf: T1 } }));
    await append(trace, write(T2, 'y.txt', true, 4));
    await append(trace, step(T2, { name: 'undo', subtask: 'undo', detail: { path: 'y.txt', undoOf: T1 } }));
    expect((await trace.forTask(T1)).map((row) => row.kind)).toEqual(['model_call', 'file_op', 'file_op', 'file_op', 'tool_call', 'file_op']);
    expect((await changes(sql)).map((change) => [change.taskId, change.sessionId, change.owner, change.path, change.kind, change.bytes])).toEqual([
      [T1, S1, 'alice', 'b.txt', 'created', 5],
      [T1, S1, 'alice', 'a.txt', 'created', 5],
      [T1, S1, 'alice', 'b.txt', 'modified', 9],
      [T2, S2, 'alice', 'z.txt', 'restored', null],
      [T2, S2, 'alice', 'y.txt', 'created', 4],
      [T2, S2, 'alice', 'y.txt', 'restored', null],
    ]);
    expect(await trace.filesOf([T1, T2, T3])).toEqual(
      new Map([
        [
          T1,
          [
            { path: 'b.txt', change: 'created', bytes: 9 },
            { path: 'a.txt', change: 'created', bytes: 5 },
          ],
        ],
        [
          T2,
          [
            { path: 'z.txt', change: 'restored', bytes: null },
            { path: 'y.txt', change: 'created', bytes: null },
          ],
        ],
        [T3, []],
      ]),
    );
    expect(await trace.filesOf([])).toEqual(new Map());
    // More Tasks than one query takes: read in slices, none lost.
    const many = await trace.filesOf([...Array.from({ length: 1200 }, (_, n) => id('d', n)), T1, T2]);
    expect([many.size, many.get(T1)?.map((file) => file.path), many.get(T2)?.length, many.get(id('d', 7))]).toEqual([1202, ['b.txt', 'a.txt'], 2, []]);
  });

  it('lists the newest change per (session, path) of an owner or a session, keyset-paged by seq', async () => {
    const source = await open(validateConfig({ database: await freshDatabase(kind) }).database, MIGRATIONS);
    const sql = new PlainSql(source);
    await seed(sql);
    const trace = new TraceRepository(sql);
    // A deterministic history: 40 changes over 12 paths in S1, S2 (alice) and S3 (bob), many paths changed again.
    const history: { taskId: string; sessionId: string; owner: string; path: string }[] = [];
    for (let n = 0; n < 40; n++) {
      const [taskId, sessionId, owner] = n % 5 === 4 ? [T3, S3, 'bob'] : n % 2 === 0 ? [T1, S1, 'alice'] : [T2, S2, 'alice'];
      const path = `f${Math.floor(n / 3) % 4}.txt`;
      await append(trace, write(taskId, path, false));
      history.push({ taskId, sessionId, owner, path });
    }
    const seqs = (await sql.all<{ seq: number | string }>('SELECT seq FROM task_file_changes ORDER BY seq')).map((row) => Number(row.seq));
    /** What the listing must say: each (session, path) once at its newest change, newest first. */
    const expected = (keep: (change: (typeof history)[number]) => boolean): ChangedFile[] => {
      const newest = new Map<string, ChangedFile>();
      history.forEach((change, index) => keep(change) && newest.set(`${change.sessionId} ${change.path}`, { sessionId: change.sessionId, path: change.path, seq: seqs[index] }));
      return [...newest.values()].sort((a, b) => b.seq - a.seq);
    };
    const files = trace;
    const pages = async (scope: { owner: string } | { sessionId: string }, limit: number) => {
      const all: ChangedFile[][] = [];
      for (let before: number | null = null; ;) {
        const page = await files.changedFiles(scope, limit, before);
        all.push(page);
        if (page.length < limit) return all;
        before = page[page.length - 1].seq;
      }
    };
    const alice = await pages({ owner: 'alice' }, 3);
    expect(alice.flat()).toEqual(expected((change) => change.owner === 'alice'));
    expect(alice.map((page) => page.length)).toEqual([3, 3, 2]);
    expect((await pages({ owner: 'bob' }, 3)).flat()).toEqual(expected((change) => change.owner === 'bob'));
    expect((await pages({ sessionId: S2 }, 2)).flat()).toEqual(expected((change) => change.sessionId === S2));
    expect(await files.changedFiles({ owner: 'carol' }, 3, null)).toEqual([]);

    // A file changed again moves to the top, and a cursor taken before that no longer lists it.
    const [first] = alice;
    const cursor = first[first.length - 1].seq;
    const moved = alice[1][0];
    await append(trace, write(moved.sessionId === S1 ? T1 : T2, moved.path, false));
    expect((await files.changedFiles({ owner: 'alice' }, 1, null))[0]).toMatchObject({ sessionId: moved.sessionId, path: moved.path });
    expect((await files.changedFiles({ owner: 'alice' }, 10, cursor)).map((file) => file.path + file.sessionId)).not.toContain(moved.path + moved.sessionId);

    if (kind === 'sqlite') {
      // The page is read through the indexes: the scope's (…, seq) walk and the (session_id, path, seq) probe, no table scan.
      const statements: { sql: string; params: unknown[] }[] = [];
      const spy = Object.assign(Object.create(sql) as PlainSql, {
        all: (text: string, params: unknown[]) => (statements.push({ sql: text, params }), sql.all(text, params)),
      });
      await new TraceRepository(spy).changedFiles({ owner: 'alice' }, 3, cursor);
      await new TraceRepository(spy).changedFiles({ sessionId: S1 }, 3, null);
      const plans = await Promise.all(statements.map(({ sql: text, params }) => sql.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${text}`, params)));
      const details = plans.map((plan) => plan.map((step) => step.detail).join('\n'));
      expect(details[0]).toMatch(/SEARCH change USING (COVERING )?INDEX idx_task_file_changes_owner \(owner=\? AND seq<\?\)/);
      expect(details[1]).toMatch(/SEARCH change USING (COVERING )?INDEX idx_task_file_changes_session \(session_id=\?\)/);
      for (const detail of details) {
        expect(detail).toMatch(/SEARCH later USING COVERING INDEX idx_task_file_changes_path \(session_id=\? AND path=\? AND seq>\?\)/);
        expect(detail).not.toMatch(/\bSCAN\b/);
      }
    }
  });
});
