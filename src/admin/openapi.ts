import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { SERVER_INFO } from '../common/server-info.js';

/** The OpenAPI document of the REST surface, generated from the controllers and DTOs. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('ollama-agent-mcp admin API')
    .setDescription(
      'Audit review, Tasks and sessions for admins, plus health probes. Admins are identified by the SSO proxy ' +
        '(a group in auth.admin_groups) or, with auth.mode none, by `Authorization: Bearer <auth.admin_token>`. ' +
        'The MCP endpoint itself is POST /mcp (Streamable HTTP), described by the MCP specification, not here.',
    )
    .setVersion(SERVER_INFO.version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'auth.admin_token (auth.mode none)' }, 'admin')
    .build();
  return SwaggerModule.createDocument(app, config);
}
