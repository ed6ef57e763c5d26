import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import type { AgentConfig } from './config/agent-config.js';
import { Clock, SYSTEM_CLOCK } from './common/clock.js';
import { AppConfig } from './config/app-config.js';
import { DatabaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { PushModule } from './push/push.module.js';
import { Metrics } from './metrics/metrics.js';
import { AdminModule } from './admin/admin.module.js';
import { A2aModule } from './a2a/a2a.module.js';
import { ChatModule } from './chat/chat.module.js';
import { HealthModule } from './health/health.module.js';
import { HttpSurfacesModule } from './http/http-surfaces.module.js';
import { HttpEdge } from './http/http-edge.js';
import { OffRouterEndpoint } from './http/off-router-endpoint.js';
import { McpHttpEndpoint } from './mcp/mcp-http.endpoint.js';
import { McpModule } from './mcp/mcp.module.js';
import { RunToolSources } from './agent/core/run-tool-sources.js';
import { McpClientModule } from './mcp-client/mcp-client.module.js';
import { AgentToolSources } from './skills/agent-tool-sources.js';
import { SkillsModule } from './skills/skills.module.js';
import { OAuthModule } from './identity/oauth/oauth.module.js';
import { OllamaModule } from './ollama/ollama.module.js';
import { OllamaStartupCheck } from './startup/ollama-startup-check.js';

/** Everything but the HTTP edge: used as is by the stdio entry point. */
@Module({})
export class CoreModule {
  static forRoot(config: AgentConfig): DynamicModule {
    return {
      module: CoreModule,
      global: true,
      imports: [DatabaseModule.forRoot(config.database), EventsModule, PushModule, ScheduleModule.forRoot(), McpModule, OllamaModule, McpClientModule, SkillsModule],
      // The agent's extra tool sources are the MCP client's (issue 22) and the skills (issue 40): bound here, so agent/ never imports either.
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: Clock, useValue: SYSTEM_CLOCK },
        Metrics,
        OllamaStartupCheck,
        { provide: RunToolSources, useExisting: AgentToolSources },
      ],
      exports: [AppConfig, Clock, Metrics, McpModule, RunToolSources],
    };
  }
}

/** The HTTP service: the core plus the HTTP edge and the /mcp endpoint behind it (mounted on the server by main.ts), the Chat API, A2A, the admin surface and health probes. */
@Module({})
export class HttpAppModule {
  static forRoot(config: AgentConfig): DynamicModule {
    return {
      module: HttpAppModule,
      imports: [CoreModule.forRoot(config), OAuthModule.forRoot(config), HttpSurfacesModule, AdminModule, HealthModule, ChatModule, A2aModule],
      providers: [{ provide: OffRouterEndpoint, useClass: McpHttpEndpoint }, HttpEdge],
    };
  }
}
