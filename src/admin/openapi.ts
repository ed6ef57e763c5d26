import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { SERVER_INFO } from '../common/server-info.js';

/** The OpenAPI document of the REST surface, generated from the controllers and DTOs. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('ollama-agent-mcp REST API')
    .setDescription(
      'The OpenAI-compatible Chat API (/v1, for every user, identified as on /mcp), and audit review, Tasks and ' +
        'sessions for admins, plus health probes. Admins are identified by the SSO proxy (a group in auth.admin_groups) ' +
        'or, with auth.mode none, by `Authorization: Bearer <auth.admin_token>`. The MCP endpoint is POST /mcp ' +
        '(Streamable HTTP) and A2A is JSON-RPC at POST /a2a with its Agent Card at /.well-known/agent-card.json, ' +
        'each described by its own specification, not here.',
    )
    .setVersion(SERVER_INFO.version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'auth.admin_token (auth.mode none)' }, 'admin')
    .build();
  return SwaggerModule.createDocument(app, config);
}
