import { Injectable } from '@nestjs/common';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { AuditService } from '../audit/audit.service.js';
import { isUuid } from '../common/uuid.js';
import { ConversationService } from '../conversation/conversation.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Caller } from '../identity/caller.js';
import type { TaskReadModel } from '../queue/task-read-model.js';
import { SessionsService } from '../sessions/sessions.service.js';
import { A2aContextsRepository } from './a2a-contexts.repository.js';

/** The longest contextId a client may make up (the column's size). */
export const CONTEXT_ID_MAX_CHARS = 256;

/** A Task as A2A shows it: with the contextId its conversation goes by (a client's name for it, else the session id). */
export type A2aView<T extends TaskReadModel = TaskReadModel> = T & { contextId: string };

/** The naming unit's refusal when the name was taken between the lookup and the commit (a refusal, not a failed write). */
class NameTaken extends Error {}

/**
 * A2A contextIds (§3.4.1): a caller's session id continues that session, as on every surface; any
 * other contextId is the caller's own name for a conversation, mapped to a session of theirs that the
 * first message under the name creates (audited: `a2a context named`). Names are per owner, so another
 * user's identical contextId is another conversation and tells nothing about this one; Tasks of a
 * named session show the name as their contextId, whichever surface accepted them.
 */
@Injectable()
export class A2aContexts {
  constructor(
    private readonly contexts: A2aContextsRepository,
    private readonly sessions: SessionsService,
    private readonly conversations: ConversationService,
    private readonly audit: AuditService,
    private readonly unitOfWork: UnitOfWork,
  ) {}

  /** SendMessage: the session the message's contextId continues, or the new one it names. */
  async sessionFor(caller: Caller, contextId: string): Promise<string> {
    const problem = nameProblem(contextId);
    if (problem) throw new RequestMalformedError(`message.contextId: ${problem}`);
    const known = await this.find(caller, contextId);
    if (known) return known;
    const { session, insertion } = this.sessions.create(caller.user);
    const event = this.audit.entry({ caller, action: 'a2a context named', outcome: 'ok', sessionId: session.id, detail: { context_id: contextId } });
    try {
      await this.unitOfWork.commit({
        writes: [this.contexts.unclaimed(caller.user, contextId, () => new NameTaken()), insertion, this.contexts.insertion(caller.user, contextId, session.id)],
        shared: [event],
      });
      return session.id;
    } catch (error) {
      // Another message of the caller named it first (on PostgreSQL the key's check waits for that commit).
      if (!(error instanceof NameTaken) && !isUniqueViolation(error)) throw error;
      const named = await this.contexts.sessionOf(caller.user, contextId);
      if (named === null) throw error;
      return named;
    }
  }

  /** The caller's session a contextId stands for (its id, or a name the caller gave one), or null. */
  async find(caller: Caller, contextId: string): Promise<string | null> {
    if (isUuid(contextId) && (await this.conversations.ownsSession(caller, contextId.toLowerCase()))) return contextId.toLowerCase();
    return this.contexts.sessionOf(caller.user, contextId);
  }

  async views<T extends TaskReadModel>(tasks: readonly T[]): Promise<A2aView<T>[]> {
    const names = await this.contexts.namesOf(tasks.map((task) => task.sessionId));
    return tasks.map((task) => ({ ...task, contextId: names.get(task.sessionId) ?? task.sessionId }));
  }

  async view<T extends TaskReadModel>(task: T): Promise<A2aView<T>> {
    return (await this.views([task]))[0];
  }
}

/** Why a contextId cannot name a conversation, or null: bounded, not blank, no control characters (it is shown back and audited). */
function nameProblem(contextId: string): string | null {
  if (contextId.length > CONTEXT_ID_MAX_CHARS) return `at most ${CONTEXT_ID_MAX_CHARS} characters (got ${contextId.length})`;
  if (contextId.trim() === '') return 'must not be blank';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(contextId)) return 'must not contain control characters';
  return null;
}
