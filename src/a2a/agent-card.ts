import { AgentCard, type SecurityScheme } from '@a2a-js/sdk';
import { SERVER_INFO } from '../common/server-info.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { IssuerMetadata } from '../identity/oauth/issuer-metadata.js';

// Images go to a vision model; other files (checked by content) into inputs/ of the session workspace.
// No application/json: a data part (structured JSON) is refused, ContentTypeNotSupportedError; a JSON
// file is still taken as a file (application/octet-stream: any file).
const INPUT_MODES = ['text/plain', 'image/png', 'image/jpeg', 'image/webp', 'application/pdf', 'text/csv', 'application/octet-stream'];
/** The skills a message chooses by its metadata (`skill`, or `agentMode: false` for the direct one). */
export const AGENT_SKILL = 'execute_task';
export const DIRECT_SKILL = 'direct_llm';
const OUTPUT_MODES = ['text/plain'];

/** Where A2A clients send JSON-RPC: `a2a.public_url`, else this service's own listen address. */
export function a2aUrl(config: AgentConfig): string {
  if (config.a2a.publicUrl !== '') return config.a2a.publicUrl;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  return `http://${host}:${config.server.port}/a2a`;
}

/**
 * How callers are identified, per `auth.mode`: nothing to send on a loopback service; behind an SSO
 * proxy, the header the trusted proxy sets (callers authenticate to the proxy, which the service trusts).
 */
function security(auth: AgentConfig['auth'], issuer?: IssuerMetadata): Pick<AgentCard, 'securitySchemes' | 'securityRequirements'> {
  if (auth.mode === 'none') return { securitySchemes: {}, securityRequirements: [] };
  if (auth.mode === 'oauth') return oauthSecurity(auth.oauth, issuer!);
  const [name, description] =
    auth.mode === 'proxy_headers'
      ? [auth.userHeader, 'The caller’s identity, set by the trusted SSO proxy in front of this service (requests from anywhere else are refused)']
      : [auth.jwtHeader, 'A signed identity assertion, set by the SSO proxy in front of this service and verified against its keys'];
  const scheme: SecurityScheme = { scheme: { $case: 'apiKeySecurityScheme', value: { description, location: 'header', name } } };
  return { securitySchemes: { sso_proxy: scheme }, securityRequirements: [{ schemes: { sso_proxy: { list: [] } } }] };
}

/** Where a receiver finds the key push JWTs are signed with (a2a.push.auth: jwt); the card has no field of its own for it. */
export const PUSH_JWKS_EXTENSION = 'urn:ollama-agent-mcp:a2a-push-jwks';
export const jwksUrlOf = (a2a: string) => new URL('/.well-known/jwks.json', a2a).href;

function pushExtensions(config: AgentConfig, url: string) {
  if (config.a2a.push.allowedUrls.length === 0 || config.a2a.push.auth !== 'jwt') return [];
  return [
    {
      uri: PUSH_JWKS_EXTENSION,
      description: 'Push notifications carry Authorization: Bearer <ES256 JWT>; verify it with this JWKS (request_body_sha256 is the body’s hash)',
      required: false,
      params: { jwks_url: jwksUrlOf(url) },
    },
  ];
}

/**
 * `auth.mode: oauth`: a bearer token from the issuer with the a2a scope, obtained with the
 * authorization-code flow (PKCE) for people or client credentials for machines; the OpenID Connect
 * scheme names the same issuer's discovery document. Any one of the schemes satisfies the requirement.
 */
function oauthSecurity(oauth: AgentConfig['auth']['oauth'], issuer: IssuerMetadata): Pick<AgentCard, 'securitySchemes' | 'securityRequirements'> {
  const scope = oauth.scopes.a2a;
  const scopes = { [scope]: 'Send messages to the agent and follow its Tasks' };
  const { authorization_endpoint: authorizationUrl = '', token_endpoint: tokenUrl = '' } = issuer.server;
  const description = `A bearer access token issued by ${oauth.issuer} for ${oauth.resource}, with the ${scope} scope`;
  const securitySchemes: Record<string, SecurityScheme> = {
    oauth2: {
      scheme: {
        $case: 'oauth2SecurityScheme',
        value: {
          description,
          oauth2MetadataUrl: issuer.documentUrl,
          flows: { flow: { $case: 'authorizationCode', value: { authorizationUrl, tokenUrl, refreshUrl: '', scopes, pkceRequired: true } } },
        },
      },
    },
    oauth2_client_credentials: {
      scheme: {
        $case: 'oauth2SecurityScheme',
        value: { description, oauth2MetadataUrl: issuer.documentUrl, flows: { flow: { $case: 'clientCredentials', value: { tokenUrl, refreshUrl: '', scopes } } } },
      },
    },
  };
  const requirements = Object.keys(securitySchemes).map((name) => ({ schemes: { [name]: { list: [scope] } } }));
  if (issuer.documentUrl.endsWith('/openid-configuration')) {
    securitySchemes.openid = { scheme: { $case: 'openIdConnectSecurityScheme', value: { description, openIdConnectUrl: issuer.documentUrl } } };
    requirements.push({ schemes: { openid: { list: [scope] } } });
  }
  return { securitySchemes, securityRequirements: requirements };
}

/** The Agent Card: what this agent is and does, its JSON-RPC interface (1.0, and 0.3 for older clients), how callers are identified. */
export function agentCardOf(config: AgentConfig, issuer?: IssuerMetadata): AgentCard {
  const url = a2aUrl(config);
  return {
    name: SERVER_INFO.name,
    description:
      'A local LLM agent on Ollama: give it a natural-language work request (with images, for vision models); it plans, ' +
      'works in its sandboxed workspace with file and shell tools, and answers. Requests run as durable Tasks, one at a ' +
      'time; a contextId continues a conversation started on any of its surfaces (MCP, Chat API, A2A).',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
    ],
    provider: undefined,
    version: SERVER_INFO.version,
    capabilities: { streaming: true, pushNotifications: config.a2a.push.allowedUrls.length > 0, extensions: pushExtensions(config, url), extendedAgentCard: false },
    ...security(config.auth, issuer),
    defaultInputModes: INPUT_MODES,
    defaultOutputModes: OUTPUT_MODES,
    skills: [
      {
        id: AGENT_SKILL,
        name: 'Execute a task',
        description: `Runs the request as an agent Task with ${config.ollama.model}: the answer is a text artifact, files it created or changed are file parts by URI.`,
        tags: ['agent', 'coding', 'files', 'shell', 'vision'],
        examples: ['Find why the tests fail and fix it', 'What is in this screenshot?'],
        inputModes: INPUT_MODES,
        outputModes: OUTPUT_MODES,
        securityRequirements: [],
      },
      {
        id: DIRECT_SKILL,
        name: 'Answer directly',
        description: `One answer from ${config.ollama.model} without tools or workspace, still a queued Task in the same conversation. Choose it with message metadata {"skill": "${DIRECT_SKILL}"} (or {"agentMode": false}); {"agentLevel": "<tier>"} picks the model tier (${['default', ...config.ollama.models.map(([tier]) => tier)].join(', ')}).`,
        tags: ['llm', 'chat'],
        examples: ['Explain what a mutex is'],
        inputModes: INPUT_MODES,
        outputModes: OUTPUT_MODES,
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/**
 * The card as the SDK's card handler writes it: that handler answers 1.0 callers with
 * `JSON.stringify(card)`, which would show the SDK's internal oneof form (`{"scheme":{"$case":…}}`)
 * instead of the protocol's JSON (`{"apiKeySecurityScheme":{…}}`). A `toJSON` giving the SDK's own
 * proto-JSON mapping fixes what it writes; its 0.3 converter reads the fields and is unaffected.
 */
export function withProtocolJson(card: AgentCard): AgentCard {
  return Object.defineProperty({ ...card }, 'toJSON', { value: () => AgentCard.toJSON(card), enumerable: false });
}
