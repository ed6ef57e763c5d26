import { Injectable, Optional } from '@nestjs/common';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { withProtocolJson } from './agent-card.js';
import { InputFilesStager } from '../conversation/input-files.stager.js';
import { ConversationIntake } from '../conversation/conversation-intake.js';
import { ConversationService } from '../conversation/conversation.service.js';
import { TaskFeed } from '../conversation/task-feed.js';
import { jsonRpcError } from '../http/refusal.js';
import { RequestAdmission, type CallerErrors, type SurfaceErrors } from '../http/request-admission.js';
import type { Caller } from '../identity/caller.js';
import { A2aPushConfigRepository } from './a2a-push-config.repository.js';
import { A2aPushStore } from './a2a-push-store.js';
import { A2aRequestHandler } from './a2a-request-handler.js';
import { personLocale } from '../common/person-locale.js';
import { A2aUser } from './a2a-user.js';
import { echoableId, envelopeProblem } from './a2a-envelope.js';
import { A2aContexts } from './a2a-contexts.js';
import { IssuerMetadata } from '../identity/oauth/issuer-metadata.js';

type IdentifiedRequest = Request & { caller?: Caller };

/**
 * A2A 1.0 with the SDK's Express handlers: the Agent Card at /.well-known/agent-card.json (public, as
 * discovery is) and JSON-RPC at POST /a2a, v0.3 callers (message/send...) included. Ahead of the SDK,
 * RequestAdmission identifies the caller as on /mcp and reads the body with A2A's limit (RequestLimits:
 * images and files; the SDK's own parser, 100 kB, would refuse images), each refusal audited.
 */
@Injectable()
export class A2aEndpoint {
  private readonly handler: A2aRequestHandler;
  /** With auth.mode oauth, the card too needs a token unless auth.oauth.public_routes names it. */
  private readonly guardedCard: boolean;

  constructor(
    conversations: ConversationService,
    intake: ConversationIntake,
    feed: TaskFeed,
    private readonly audit: AuditService,
    private readonly admission: RequestAdmission,
    inputFiles: InputFilesStager,
    config: AppConfig,
    pushConfigs: A2aPushConfigRepository,
    contexts: A2aContexts,
    @Optional() issuer?: IssuerMetadata,
  ) {
    const pushStore = new A2aPushStore(pushConfigs, config.a2a.push.allowedUrls);
    this.handler = new A2aRequestHandler(conversations, feed, audit, inputFiles, config, pushStore, contexts, intake, issuer);
    this.guardedCard = config.auth.mode === 'oauth' && !config.auth.oauth.publicRoutes.includes('agent_card');
  }

  /**
   * The handlers of A2A's rows of the route table (mountExpressRoutes mounts them on their paths, for
   * their methods alone): the Agent Card and JSON-RPC, each behind the version parameter's reading.
   */
  handlers(): Record<'GET /.well-known/agent-card.json' | 'POST /a2a', RequestHandler[]> {
    // The SDK's 1.0 route would write the card's oneofs as {$case, value}: withProtocolJson gives it the A2A 1.0 JSON.
    const agentCardProvider = async () => withProtocolJson(await this.handler.getAgentCard());
    const admitCard: RequestHandler = (req, res, next) => void this.admitCard(req, res, next).catch(next);
    return {
      'GET /.well-known/agent-card.json': [versionFromQuery, ...(this.guardedCard ? [admitCard] : []), agentCardHandler({ agentCardProvider, legacyCompat: { enabled: true } })],
      'POST /a2a': [
        versionFromQuery,
        (req, res, next) => void this.admit(req, res, next).catch(next),
        jsonRpcHandler({
          requestHandler: this.handler,
          userBuilder: async (req) =>
            new A2aUser((req as IdentifiedRequest).caller!, { traceparent: req.headers.traceparent, tracestate: req.headers.tracestate }, personLocale(req)),
          legacyCompat: { enabled: true },
        }),
      ],
    };
  }

  private async admitCard(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (await this.admission.caller(req, res, CARD_ERRORS, '/.well-known/agent-card.json')) next();
  }

  private async admit(req: IdentifiedRequest, res: Response, next: NextFunction): Promise<void> {
    const admitted = await this.admission.request(req, res, A2A_ERRORS, '/a2a');
    if (!admitted) return;
    const problem = envelopeProblem(admitted.body);
    if (problem) {
      const reason = `Invalid Request: ${problem}`;
      await this.audit.record({ caller: admitted.caller, action: A2A_ERRORS.bodyRejected, outcome: 'rejected', detail: { reason } });
      // Status 200, as the SDK answers every JSON-RPC error that is not the server's fault.
      res.status(200).json({ ...jsonRpcError(-32600, reason), id: echoableId(admitted.body) });
      return;
    }
    req.body = admitted.body;
    req.caller = admitted.caller;
    next();
  }
}

/**
 * A2A 1.0 §3.6.1: a client may send `A2A-Version` as a request parameter instead of the header. The
 * SDK reads only the header, so the parameter becomes one (a header sent too wins). Service parameter
 * names are case-insensitive (§3.2.6); a repeated parameter's first value counts.
 */
function versionFromQuery(req: Request, _res: Response, next: NextFunction): void {
  if (req.headers['a2a-version'] === undefined) {
    const key = Object.keys(req.query).find((name) => name.toLowerCase() === 'a2a-version');
    const value: unknown = key === undefined ? undefined : [req.query[key]].flat()[0];
    if (typeof value === 'string') req.headers['a2a-version'] = value;
  }
  next();
}

/** The Agent Card is no JSON-RPC exchange: a caller refused it reads a plain error object. */
const CARD_ERRORS: CallerErrors = { transport: 'a2a', unadmitted: ({ message }) => ({ error: 'unauthorized', message }) };

/** A2A's refusals as JSON-RPC errors (the id is unknown: the body was not read as a request). */
const A2A_ERRORS: SurfaceErrors = {
  transport: 'a2a',
  bodyRejected: 'a2a.request_rejected',
  unadmitted: ({ message }) => jsonRpcError(-32600, message),
  busy: () => jsonRpcError(-32000, 'Service busy: too many request bodies in flight; retry shortly'),
  badBody(problem, maxBytes) {
    const [status, code, message]: [400 | 413, number, string] =
      problem.kind === 'too_large'
        ? [413, -32600, `Request body exceeds ${maxBytes} bytes`]
        : problem.kind === 'too_deep'
          ? [400, -32600, 'Invalid Request: JSON nested too deep']
          : [400, -32700, 'Parse error: the body is not a JSON-RPC request'];
    return { status, body: jsonRpcError(code, message), detail: { reason: message } };
  },
};
