import { describe, expect, it } from '@jest/globals';
import type { ApprovalEntity } from '../../src/approvals/approval.entity.js';
import type { ApprovalsRepository } from '../../src/approvals/approvals.repository.js';
import { ApprovalsService } from '../../src/approvals/approvals.service.js';
import type { AuditRecord, AuditService } from '../../src/audit/audit.service.js';
import type { AppConfig } from '../../src/config/app-config.js';
import type { UnitOfWork } from '../../src/database/unit-of-work.js';
import { ManualClock } from '../support/manual-clock.js';

const WAIT_MS = 1000;
const form = {
  taskId: 'a0000000-0000-4000-8000-000000000001',
  sessionId: 'b0000000-0000-4000-8000-000000000001',
  owner: 'alice',
  server: 'wiki',
  tool: 'login',
  message: 'Your name?',
  schema: { type: 'object' as const, properties: { name: { type: 'string' as const, maxLength: 100 } }, required: ['name'] },
};

/**
 * The approvals table as ApprovalsRepository's conditional statements use it (one row per request), and
 * a promise for the n-th read of it: the test moves the clock only once the wait has looked.
 */
class Approvals {
  readonly rows = new Map<string, ApprovalEntity>();
  private reads = 0;
  private readonly readers: { n: number; done: () => void }[] = [];

  insertion = (row: ApprovalEntity) => ({ row });
  findById = (id: string) => {
    this.reads += 1;
    for (const reader of this.readers.filter((waiting) => waiting.n <= this.reads)) reader.done();
    return Promise.resolve(this.rows.has(id) ? { ...this.rows.get(id)! } : null);
  };
  settleWaiting = (id: string) => {
    const row = this.rows.get(id);
    if (!row?.waiting || row.state !== 'pending') return Promise.resolve(false);
    Object.assign(row, { state: 'cancelled', waiting: false });
    return Promise.resolve(true);
  };
  settle = () => Promise.resolve();
  read(n: number): Promise<void> {
    return new Promise((done) => (n <= this.reads ? done() : this.readers.push({ n, done })));
  }
}

/** Issue 22, item 3: a form nobody answers within agent.approvals.wait_ms ends, and its server is told `cancel`. */
describe("another server's form left unanswered (wait_ms)", () => {
  function service() {
    const clock = new ManualClock();
    const approvals = new Approvals();
    const audited: AuditRecord[] = [];
    const audit = { entry: (record: AuditRecord) => (audited.push(record), record), record: (record: AuditRecord) => (audited.push(record), Promise.resolve()) };
    const unitOfWork = { commit: ({ writes }: { writes: { row: ApprovalEntity }[] }) => (writes.forEach(({ row }) => approvals.rows.set(row.id, { ...row })), Promise.resolve()) };
    const config = { agent: { approvals: { mode: 'never', allow: [], waitMs: WAIT_MS } }, queue: { pollIntervalMs: 1 }, mcp: { locale: 'en' } };
    const approvalsService = new ApprovalsService(
      approvals as unknown as ApprovalsRepository,
      audit as unknown as AuditService,
      unitOfWork as unknown as UnitOfWork,
      config as unknown as AppConfig,
      clock,
    );
    return { clock, approvals, audited, approvalsService };
  }

  it('waits until wait_ms has passed on the clock, then ends cancelled, audited elicitation.expired, and answers cancel', async () => {
    const { clock, approvals, audited, approvalsService } = service();
    let settled = false;
    let asked: ApprovalEntity | null = null;
    const answer = approvalsService
      .askForm(form, new AbortController().signal, (row) => {
        asked = row;
        return Promise.resolve();
      })
      .finally(() => (settled = true));
    // One millisecond short of wait_ms, two more looks at the row: still waiting.
    await approvals.read(1);
    clock.advance(WAIT_MS - 1);
    await approvals.read(3);
    expect(settled).toBe(false);
    expect(approvals.rows.get(asked!.id)).toMatchObject({ state: 'pending', waiting: true });

    clock.advance(1);
    expect(await answer).toEqual({ action: 'cancel' });
    expect(approvals.rows.get(asked!.id)).toMatchObject({ state: 'cancelled', waiting: false });
    expect(audited.map((record) => record.action)).toEqual(['elicitation.asked', 'elicitation.expired']);
    expect(audited[1]).toMatchObject({
      outcome: 'ok',
      taskId: form.taskId,
      detail: { approval_id: asked!.id, server: 'wiki', mcp_tool: 'login', fields: ['name'], wait_ms: WAIT_MS },
    });
  });

  it('gives the server an answer that came in as the wait ran out, not cancel', async () => {
    const { clock, approvals, audited, approvalsService } = service();
    const answer = approvalsService.askForm(form, new AbortController().signal, () => Promise.resolve());
    // The person's answer lands between the wait's last look (pending, past the deadline) and its settling.
    const settleWaiting = approvals.settleWaiting;
    approvals.settleWaiting = (row: string) => (Object.assign(approvals.rows.get(row)!, { state: 'granted', waiting: false, reason: '{"name":"Alice"}' }), settleWaiting(row));
    await approvals.read(1);
    clock.advance(WAIT_MS);
    expect(await answer).toEqual({ action: 'accept', content: { name: 'Alice' } });
    expect(audited.map((record) => record.action)).toEqual(['elicitation.asked']);
  });
});
