import { Injectable, Optional } from '@nestjs/common';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { Express, NextFunction, Request, Response } from 'express';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { withProtocolJson } from './agent-card.js';
import { InputFilesStager } from '../conversation/input-files.stager.js';
import { ConversationService } from '../conversation/conversation.service.js';
import { SurfaceIdentity } from '../http/surface-identity.js';
import { TaskFeed } from '../conversation/task-feed.js';
import { jsonRpcError, refuse } from '../http/refusal.js';
import type { Caller } from '../identity/caller.js';
import { maxRequestBodyBytes } from '../config/request-limits.js';
import { BodyBudget } from '../http/body-budget.js';
import { readJsonBody } from '../http/json-body.js';
import { PushSigning } from '../push/push-signing.js';
import { A2aPushConfigRepository } from './a2a-push-config.repository.js';
import { A2aPushStore } from './a2a-push-store.js';
import { A2aRequestHandler } from './a2a-request-handler.js';
import { A2aUser } from './a2a-user.js';
import { IssuerMetadata } from '../identity/oauth/issuer-metadata.js';

type IdentifiedRequest = Request & { caller?: Caller };

/**
 * A2A 1.0 with the SDK's Express handlers: the Agent Card at /.well-known/agent-card.json (public, as
 * discovery is) and JSON-RPC at POST /a2a, v0.3 callers (message/send...) included. Ahead of the SDK,
 * the caller is identified as on /mcp and the body read with the /mcp limit (the SDK's own parser,
 * 100 kB, would refuse images), each refusal audited.
 */
@Injectable()
export class A2aEndpoint {
  private readonly handler: A2aRequestHandler;
  private readonly maxBodyBytes: number;
  /** With auth.mode oauth, the card too needs a token unless auth.oauth.public_routes names it. */
  private readonly guardedCard: boolean;

  constructor(
    conversations: ConversationService,
    feed: TaskFeed,
    private readonly audit: AuditService,
    private readonly identity: SurfaceIdentity,
    private readonly budget: BodyBudget,
    inputFiles: InputFilesStager,
    config: AppConfig,
    pushConfigs: A2aPushConfigRepository,
    private readonly signing: PushSigning,
    @Optional() issuer?: IssuerMetadata,
  ) {
    this.handler = new A2aRequestHandler(conversations, feed, audit, inputFiles, config, new A2aPushStore(pushConfigs, config.a2a.push.allowedUrls), issuer);
    this.guardedCard = config.auth.mode === 'oauth' && !config.auth.oauth.publicRoutes.includes('agent_card');
    this.maxBodyBytes = maxRequestBodyBytes(config.mcp.images.maxTotalBytes, config.mcp.files.maxBytes);
  }

  mount(app: Express): void {
    // The public key push JWTs are signed with (a2a.push.auth: jwt), public as the card is.
    app.get('/.well-known/jwks.json', (_req: Request, res: Response, next: NextFunction) => void this.signing.jwks().then((jwks) => res.json(jwks), next));
    if (this.guardedCard) app.use('/.well-known/agent-card.json', (req: Request, res: Response, next: NextFunction) => void this.admitCard(req, res, next).catch(next));
    // The SDK's 1.0 route would write the card's oneofs as {$case, value}: withProtocolJson gives it the A2A 1.0 JSON.
    const agentCardProvider = async () => withProtocolJson(await this.handler.getAgentCard());
    app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider, legacyCompat: { enabled: true } }));
    app.use(
      '/a2a',
      (req: Request, res: Response, next: NextFunction) => void this.admit(req, res, next).catch(next),
      jsonRpcHandler({ requestHandler: this.handler, userBuilder: async (req) => new A2aUser((req as IdentifiedRequest).caller!), legacyCompat: { enabled: true } }),
    );
  }

  private async admitCard(req: Request, res: Response, next: NextFunction): Promise<void> {
    const admission = await this.identity.admit(req, 'a2a', '/.well-known/agent-card.json');
    if ('refusal' in admission) return refuse(req, res, admission.refusal.status, { error: 'unauthorized', message: admission.refusal.message }, admission.refusal.headers);
    next();
  }

  private async admit(req: IdentifiedRequest, res: Response, next: NextFunction): Promise<void> {
    if (req.method !== 'POST') return next();
    const admission = await this.identity.admit(req, 'a2a', '/a2a');
    if ('refusal' in admission) return refuse(req, res, admission.refusal.status, jsonRpcError(-32600, admission.refusal.message), admission.refusal.headers);
    // What the body holds counts against server.max_buffered_bytes until the answer is written.
    const lease = this.budget.lease();
    res.once('close', lease.release);
    const body = await readJsonBody(req, this.maxBodyBytes, lease);
    if (body.kind === 'aborted') return;
    if (body.kind === 'busy') return refuse(req, res, 503, jsonRpcError(-32000, 'Service busy: too many request bodies in flight; retry shortly'), { 'Retry-After': '1' });
    if (body.kind !== 'json') {
      const [status, code, message] =
        body.kind === 'too_large'
          ? [413, -32600, `Request body exceeds ${this.maxBodyBytes} bytes`]
          : body.kind === 'too_deep'
            ? [400, -32600, 'Invalid Request: JSON nested too deep']
            : [400, -32700, 'Parse error: the body is not a JSON-RPC request'];
      await this.audit.record({ caller: admission.caller, action: 'a2a.request_rejected', outcome: 'rejected', detail: { reason: message } });
      return refuse(req, res, status, jsonRpcError(code, message));
    }
    req.body = body.value;
    req.caller = admission.caller;
    next();
  }
}
