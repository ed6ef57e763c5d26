import { randomUUID } from 'node:crypto';
import { SteerRefused } from '../../src/agent/steer-inbox.repository.js';
import { RunEventHub } from '../../src/agent/run-event-hub.js';
import type { ApprovalEntity } from '../../src/approvals/approval.entity.js';
import type { ApprovalAnswer } from '../../src/approvals/approvals.repository.js';
import { ApprovalsService } from '../../src/approvals/approvals.service.js';
import type { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { AuditService } from '../../src/audit/audit.service.js';
import type { AppConfig } from '../../src/config/app-config.js';
import type { SqlStep } from '../../src/database/plain-sql.js';
import type { Unit } from '../../src/database/unit-of-work.js';
import { ConversationIntake } from '../../src/conversation/conversation-intake.js';
import { InputFilesStager } from '../../src/conversation/input-files.stager.js';
import type { Caller } from '../../src/identity/caller.js';
import { TaskQueueService } from '../../src/queue/task-queue.service.js';
import type { TaskFilters } from '../../src/queue/tasks.repository.js';
import type { TaskEntity } from '../../src/queue/task.entity.js';
import type { SessionEntity } from '../../src/sessions/session.entity.js';
import { SessionsService } from '../../src/sessions/sessions.service.js';

/**
 * In-memory stores for service-level specs of the intake (ADR 0020: a change to the core tested in under
 * 15 s without a server): one fake per repository the real services use, over one `MemoryDb`, and a unit
 * of work that commits a unit whole or not at all. Each fake's write is a guard that checks and changes
 * the rows at once, as the repository's SQL does in its transaction; the real services above are unchanged.
 */
export interface SteerRow {
  id: string;
  taskId: string;
  text: string;
  position: number;
  state: 'open' | 'taken';
}

export class MemoryDb {
  tasks = new Map<string, TaskEntity>();
  sessions = new Map<string, SessionEntity>();
  approvals: ApprovalEntity[] = [];
  steers: SteerRow[] = [];
  audit: AuditEventEntity[] = [];
  seq = 0;
}

/** A fake repository's write: runs in the unit's commit, may throw to refuse the whole unit. */
const write = (change: () => void): SqlStep => ({ op: 'all', sql: '-- memory', params: [], check: () => change() });

/** A fake repository's statement whose rows another module's guard checks (the rows it would return in SQL). */
type MemoryRead = Extract<SqlStep, { op: 'all' }> & { rows: () => unknown[] };
const read = (rows: () => unknown[]): MemoryRead => ({ op: 'all', sql: '-- memory', params: [], rows });

/** Group commit aside, UnitOfWork's contract: every write and shared item of a unit, or none. */
export class MemoryUnitOfWork {
  constructor(private readonly db: MemoryDb) {}
  async commit(unit: Unit): Promise<void> {
    const before = structuredClone({ ...this.db });
    try {
      for (const step of unit.writes ?? []) {
        if (step.op !== 'all' || step.sql !== '-- memory') throw new Error(`a real SQL step reached the memory unit of work: ${JSON.stringify(step)}`);
        step.check?.((step as Partial<MemoryRead>).rows?.() ?? []);
      }
      for (const shared of unit.shared ?? []) this.db.audit.push(shared.item as AuditEventEntity);
    } catch (error) {
      Object.assign(this.db, before);
      throw error;
    }
  }
}

export class MemoryTasks {
  constructor(private readonly db: MemoryDb) {}
  async findById(id: string) {
    return this.db.tasks.get(id) ?? null;
  }
  insertion(task: TaskEntity): SqlStep[] {
    return [write(() => this.db.tasks.set(task.id, { ...task, seq: ++this.db.seq }))];
  }
  async list(filters: TaskFilters, limit: number) {
    return [...this.db.tasks.values()]
      .filter((task) => (!filters.owner || task.owner === filters.owner) && (!filters.sessionId || task.sessionId === filters.sessionId))
      .filter((task) => !filters.status || filters.status.includes(task.status))
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit);
  }
  async newestOfSession(sessionId: string) {
    const [newest] = [...this.db.tasks.values()].filter((task) => task.sessionId === sessionId).sort((a, b) => b.seq - a.seq);
    return newest?.id ?? null;
  }
  /** TasksRepository.correctionCount: the UPDATE … RETURNING steer_count, done when the unit reads its rows. */
  correctionCount(taskId: string, owner: string, running: boolean): MemoryRead {
    return read(() => {
      const task = this.db.tasks.get(taskId);
      if (!task || task.owner !== owner || (running && (!['planning', 'running'].includes(task.status) || task.steeringClosed))) return [];
      task.steerCount += 1;
      return [{ steer_count: task.steerCount }];
    });
  }
  queuedLimit(owner: string, limit: number, refuse: (queued: number) => Error) {
    const check = write(() => {
      const queued = [...this.db.tasks.values()].filter((task) => task.owner === owner && task.status === 'queued').length;
      if (queued > limit) throw refuse(queued - 1);
    });
    return { before: [], after: [check] };
  }
}

export class MemorySessions {
  constructor(private readonly db: MemoryDb) {}
  async find(id: string) {
    return this.db.sessions.get(id) ?? null;
  }
  insertion(session: SessionEntity): SqlStep {
    return write(() => this.db.sessions.set(session.id, session));
  }
}

export class MemoryApprovalRows {
  constructor(private readonly db: MemoryDb) {}
  async pendingOfSession(sessionId: string) {
    return this.db.approvals.findLast((row) => row.sessionId === sessionId && row.state === 'pending') ?? null;
  }
  async decidedBy(sessionId: string, answerTaskId: string) {
    return this.db.approvals.find((row) => row.sessionId === sessionId && ['granted', 'denied'].includes(row.state) && row.answerTaskId === answerTaskId) ?? null;
  }
  async findById(id: string) {
    return this.db.approvals.find((row) => row.id === id) ?? null;
  }
  stillPending(id: string, taskId: string): MemoryRead {
    return read(() => this.db.approvals.filter((row) => row.id === id && row.taskId === taskId && row.state === 'pending' && !row.waiting).map((row) => ({ id: row.id })));
  }
  decision(id: string, owner: string, answerTaskId: string, answer: ApprovalAnswer, refuse: () => Error): SqlStep[] {
    return [
      write(() => {
        const row = this.db.approvals.find((candidate) => candidate.id === id && candidate.owner === owner && !candidate.waiting && candidate.state === 'pending');
        if (!row) throw refuse();
        Object.assign(row, { ...answer, waiting: false, answerTaskId, answeredAt: new Date().toISOString() });
      }),
    ];
  }
}

/** SteerInboxRepository's guards on the queue's count (MemoryTasks.correctionCount) and, for a kept one, on its request. */
export class MemorySteerRows {
  constructor(private readonly db: MemoryDb) {}
  acceptance(task: { taskId: string }, counted: MemoryRead, text: string, max: number) {
    return this.stored(task.taskId, text, max, [counted]);
  }
  keptDuringWait(task: { taskId: string }, stillPending: MemoryRead, counted: MemoryRead, text: string, max: number) {
    return this.stored(task.taskId, text, max, [stillPending, counted]);
  }
  private stored(taskId: string, text: string, max: number, guards: MemoryRead[]) {
    const id = randomUUID();
    const step = write(() => {
      let rows: unknown[] = [];
      for (const guard of guards) {
        rows = guard.rows();
        if (rows.length === 0) throw new SteerRefused('not_running');
      }
      const count = (rows[0] as { steer_count: number }).steer_count;
      if (count > max) throw new SteerRefused('limit');
      this.db.steers.push({ id, taskId, text, position: count, state: 'open' });
    });
    return { id, writes: [step] };
  }
}

/** The real services of the intake on the memory stores; `config` as validateConfig gives it. */
export function buildIntake(config: AppConfig, options: { historyOn?: boolean } = {}) {
  const db = new MemoryDb();
  const unitOfWork = new MemoryUnitOfWork(db);
  const writer = {
    entry: (item: AuditEventEntity) => ({ step: writer, item }),
    append: (item: AuditEventEntity) => unitOfWork.commit({ shared: [{ step: writer as never, item }] }),
  };
  const audit = new AuditService(writer as never, config);
  const sessions = new SessionsService(new MemorySessions(db) as never);
  const approvals = new ApprovalsService(new MemoryApprovalRows(db) as never, audit, unitOfWork as never, config);
  const woken: number[] = [];
  const queue = new TaskQueueService(
    new MemoryTasks(db) as never,
    sessions,
    audit,
    unitOfWork as never,
    { wake: () => void woken.push(1) } as never,
    {} as never,
    config,
    { fork: async () => Promise.reject(new Error('no forks in memory')) } as never,
    new RunEventHub(),
    approvals,
    { assertWithinQuota: async () => undefined } as never,
    { enabled: false } as never,
    { accepted: () => undefined } as never,
  );
  const intake = new ConversationIntake(
    queue,
    sessions,
    new MemorySteerRows(db) as never,
    approvals,
    { enabled: options.historyOn ?? true } as never,
    unitOfWork as never,
    audit,
    config,
  );
  // Files are staged into a workspace, which these stores do not have: a request with files is refused.
  const inputFiles = new InputFilesStager(config, sessions, { root: () => Promise.reject(new Error('no workspace in memory')) } as never, {} as never);
  return { db, intake, queue, approvals, audit, sessions, inputFiles, woken };
}

/** A caller as the HTTP edge makes one. */
export const callerOf = (user: string, admin = false): Caller => ({ user, groups: [], client: 'spec', transport: 'chat', address: null, admin });

/** A Task that already exists in the store (what an earlier intake and the worker left), for a spec to start from. */
export function seedTask(db: MemoryDb, fields: Partial<TaskEntity> & Pick<TaskEntity, 'id' | 'sessionId' | 'owner' | 'status'>): TaskEntity {
  if (!db.sessions.has(fields.sessionId)) db.sessions.set(fields.sessionId, { id: fields.sessionId, owner: fields.owner, createdAt: '2026-12-06T00:00:00.000Z', prelude: null });
  const task: TaskEntity = {
    request: 'earlier work',
    ownerGroups: '[]',
    ownerEmail: null,
    temperature: null,
    client: 'spec',
    surface: 'http',
    locale: null,
    answersInPlace: false,
    unattended: null,
    mode: 'agent' as const,
    tier: 'default',
    budget: null,
    stoppedBy: null,
    steerCount: 0,
    steeringClosed: false,
    completedSubtasks: 0,
    totalSubtasks: 1,
    currentTask: '',
    inputTokens: 0,
    outputTokens: 0,
    criticalPathTokens: 0,
    result: null,
    cancelRequested: false,
    attempt: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    traceId: null,
    spanId: null,
    traceParent: null,
    traceState: null,
    createdAt: '2026-12-06T00:00:00.000Z',
    updatedAt: '2026-12-06T00:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    ...fields,
    seq: ++db.seq,
  };
  db.tasks.set(task.id, task);
  return task;
}

/** A request its Task left for the conversation (an approval of a command, or a question with options). */
export function seedPending(
  db: MemoryDb,
  task: TaskEntity,
  kind: { tool: 'run_command'; subject: string } | { tool: 'ask_user'; subject: string; options: string[] },
): ApprovalEntity {
  const row = {
    id: randomUUID(),
    taskId: task.id,
    sessionId: task.sessionId,
    owner: task.owner,
    tool: kind.tool,
    kind: kind.tool === 'ask_user' ? 'question' : 'approval',
    subject: kind.subject,
    diff: null,
    diffSha256: null,
    options: 'options' in kind ? JSON.stringify(kind.options) : null,
    form: null,
    resume: '{}',
    state: 'pending',
    waiting: false,
    answeredBy: null,
    answeredClient: null,
    answeredVia: null,
    reason: null,
    answerTaskId: null,
    createdAt: '2026-12-06T00:00:01.000Z',
    answeredAt: null,
  } as ApprovalEntity;
  db.approvals.push(row);
  return row;
}
