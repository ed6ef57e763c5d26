import { describe, expect, it, jest } from '@jest/globals';
import { A2aContexts } from '../../src/a2a/a2a-contexts.js';
import type { A2aContextsRepository } from '../../src/a2a/a2a-contexts.repository.js';
import type { AuditService } from '../../src/audit/audit.service.js';
import type { ConversationService } from '../../src/conversation/conversation.service.js';
import type { SqlStep } from '../../src/database/plain-sql.js';
import type { Unit, UnitOfWork } from '../../src/database/unit-of-work.js';
import type { Caller } from '../../src/identity/caller.js';
import type { TaskReadModel } from '../../src/queue/task-read-model.js';
import type { SessionsService } from '../../src/sessions/sessions.service.js';

const alice = { user: 'alice', groups: [], transport: 'a2a' } as unknown as Caller;
const OWN = '2a8105cc-84f9-4d37-a5bd-e48e04654eb7';
const NEW = '9ab4a40b-86fe-432a-904f-8e429c01ea8b';
const WINNER = '0f6c3a52-3b7e-4d1e-9a51-1b2c3d4e5f60';

type Guard = (owner: string, contextId: string, taken: () => Error) => SqlStep;

/** A2aContexts on fakes: `named` is the a2a_contexts table, `commit` what the unit of work does with the naming unit. */
function contextsWith(named: Map<string, string>, commit: (unit: Unit, repository: { unclaimed: jest.Mock<Guard> }) => Promise<void> = async () => undefined) {
  const insertion = { op: 'run', sql: 'INSERT INTO sessions …', params: [] } as SqlStep;
  const repository = {
    sessionOf: jest.fn(async (owner: string, contextId: string) => named.get(`${owner}/${contextId}`) ?? null),
    namesOf: jest.fn(async (ids: readonly string[]) => new Map([...named].filter(([, id]) => ids.includes(id)).map(([key, id]) => [id, key.slice(key.indexOf('/') + 1)]))),
    unclaimed: jest.fn<Guard>(() => ({ op: 'all', sql: 'guard', params: [] })),
    insertion: jest.fn((_owner: string, _contextId: string, _sessionId: string): SqlStep => ({ op: 'run', sql: 'INSERT INTO a2a_contexts …', params: [] })),
  };
  const sessions = { create: jest.fn((_owner: string) => ({ session: { id: NEW }, insertion })) };
  const conversations = { ownsSession: jest.fn(async (_caller: Caller, id: string) => id === OWN) };
  const audit = { entry: jest.fn((record: unknown) => ({ step: null, item: record })) };
  const unitOfWork = { commit: jest.fn((unit: Unit) => commit(unit, repository)) };
  const contexts = new A2aContexts(
    repository as unknown as A2aContextsRepository,
    sessions as unknown as SessionsService,
    conversations as unknown as ConversationService,
    audit as unknown as AuditService,
    unitOfWork as unknown as UnitOfWork,
  );
  return { contexts, repository, sessions, audit, unitOfWork };
}

describe('A2aContexts (issue 43)', () => {
  it('continues the caller’s own session by its id (any case), and a name the caller gave one; creates nothing for either', async () => {
    const { contexts, unitOfWork } = contextsWith(new Map([['alice/my-chat', NEW]]));
    expect(await contexts.sessionFor(alice, OWN.toUpperCase())).toBe(OWN);
    expect(await contexts.sessionFor(alice, 'my-chat')).toBe(NEW);
    expect(unitOfWork.commit).not.toHaveBeenCalled();
  });

  it('names a new session in one unit: the guard, the session, the name, and its audit event', async () => {
    const { contexts, repository, sessions, audit, unitOfWork } = contextsWith(new Map());
    expect(await contexts.sessionFor(alice, 'fresh name')).toBe(NEW);
    expect(sessions.create).toHaveBeenCalledWith('alice');
    expect(repository.insertion).toHaveBeenCalledWith('alice', 'fresh name', NEW);
    expect(audit.entry).toHaveBeenCalledWith({ caller: alice, action: 'a2a context named', outcome: 'ok', sessionId: NEW, detail: { context_id: 'fresh name' } });
    const [unit] = unitOfWork.commit.mock.calls[0];
    expect(unit.writes?.map((step) => ('sql' in step ? step.sql : step.op))).toEqual(['guard', 'INSERT INTO sessions …', 'INSERT INTO a2a_contexts …']);
  });

  it('takes the session of whoever named it first when the guard refuses (SQLite) or the key is violated (PostgreSQL)', async () => {
    const guardRefusal = (repository: { unclaimed: jest.Mock<Guard> }) => repository.unclaimed.mock.calls[0][2]();
    const keyViolation = () => Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    for (const raced of [guardRefusal, keyViolation]) {
      const named = new Map<string, string>();
      const { contexts } = contextsWith(named, async (_unit, repository) => {
        named.set('alice/raced', WINNER);
        throw raced(repository);
      });
      expect(await contexts.sessionFor(alice, 'raced')).toBe(WINNER);
    }
  });

  it('passes on any other failure of the naming unit', async () => {
    const { contexts } = contextsWith(new Map(), async () => {
      throw new Error('database is down');
    });
    await expect(contexts.sessionFor(alice, 'x')).rejects.toThrow('database is down');
  });

  it('refuses names over 256 characters, blank, or with control characters, before touching the database', async () => {
    const { contexts, repository } = contextsWith(new Map());
    for (const [name, problem] of [
      ['x'.repeat(257), 'at most 256 characters (got 257)'],
      ['a\tb', 'must not contain control characters'],
      ['  ', 'must not be blank'],
      ['a\u0085b', 'must not contain control characters'],
    ]) {
      await expect(contexts.sessionFor(alice, name)).rejects.toThrow(`message.contextId: ${problem}`);
    }
    expect(repository.sessionOf).not.toHaveBeenCalled();
    expect(await contexts.sessionFor(alice, 'y'.repeat(256))).toBe(NEW);
  });

  it('shows a named session’s Tasks under the name, any other under its session id', async () => {
    const { contexts } = contextsWith(new Map([['alice/my-chat', NEW]]));
    const views = await contexts.views([{ sessionId: NEW } as TaskReadModel, { sessionId: OWN } as TaskReadModel]);
    expect(views.map((view) => view.contextId)).toEqual(['my-chat', OWN]);
  });
});
