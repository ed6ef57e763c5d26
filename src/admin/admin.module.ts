import { Module, ValidationPipe, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AgentModule } from '../agent/agent.module.js';
import { ApprovalsModule } from '../approvals/approvals.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { ConversationModule } from '../conversation/conversation.module.js';
import { HealthModule } from '../health/health.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { TaskQueueModule } from '../queue/task-queue.module.js';
import { SessionFilesModule } from '../session-files/session-files.module.js';
import { SessionsModule } from '../sessions/sessions.module.js';
import { AdminApprovalsController } from './admin-approvals.controller.js';
import { AdminApprovalsService } from './admin-approvals.service.js';
import { AdminAuditController } from './admin-audit.controller.js';
import { AdminAuditInterceptor } from './admin-audit.interceptor.js';
import { AdminAuditService } from './admin-audit.service.js';
import { AdminAuthGuard } from './admin-auth.guard.js';
import { AdminHealthController } from './admin-health.controller.js';
import { AdminHistoryController } from './admin-history.controller.js';
import { AdminIdentityController } from './admin-identity.controller.js';
import { AdminMetricsController } from './admin-metrics.controller.js';
import { AdminMetricsService } from './admin-metrics.service.js';
import { AdminMcpServersController } from './admin-mcp-servers.controller.js';
import { AdminEvalResultsController } from './admin-eval-results.controller.js';
import { evalResultsProvider } from '../eval/eval-results.repository.js';
import { McpClientModule } from '../mcp-client/mcp-client.module.js';
import { SkillsModule } from '../skills/skills.module.js';
import { AdminSkillsController } from './admin-skills.controller.js';
import { AdminPageController } from './admin-page.controller.js';
import { AdminSessionFilesController } from './admin-session-files.controller.js';
import { AdminSignInController } from './admin-sign-in.controller.js';
import { AdminTasksController } from './admin-tasks.controller.js';
import { AdminTasksService } from './admin-tasks.service.js';
import { AdminUsageController } from './admin-usage.controller.js';
import { AdminUsageService } from './admin-usage.service.js';
import { ConsoleConversationController } from './console-conversation.controller.js';
import { ConsoleConversationService } from './console-conversation.service.js';
import { ChatModule } from '../chat/chat.module.js';
import { AgentErrorFilter } from './agent-error.filter.js';
import { AdminJsonBody } from './admin-json-body.js';
import { AdminSchedulesController } from './admin-schedules.controller.js';
import { AdminTriggersController } from './admin-triggers.controller.js';
import { SchedulesModule } from '../schedules/schedules.module.js';
import { TriggersModule } from '../triggers/triggers.module.js';

/** The admin REST surface (audit review, Tasks, sessions, metrics, readiness reasons, schedules and triggers) and its page. */
@Module({
  imports: [
    AuditModule,
    ConversationModule,
    TaskQueueModule,
    AgentModule,
    SessionsModule,
    SessionFilesModule,
    IdentityModule,
    HealthModule,
    ApprovalsModule,
    McpClientModule,
    ChatModule,
    SchedulesModule,
    TriggersModule,
    SkillsModule,
  ],
  controllers: [
    AdminIdentityController,
    AdminAuditController,
    AdminTasksController,
    AdminSessionFilesController,
    AdminHistoryController,
    AdminApprovalsController,
    AdminMetricsController,
    AdminHealthController,
    AdminMcpServersController,
    AdminEvalResultsController,
    AdminSchedulesController,
    AdminTriggersController,
    AdminSkillsController,
    AdminUsageController,
    AdminPageController,
    AdminSignInController,
    ConsoleConversationController,
  ],
  providers: [
    AdminAuthGuard,
    AdminAuditInterceptor,
    AdminAuditService,
    AdminTasksService,
    AdminApprovalsService,
    ConsoleConversationService,
    AdminMetricsService,
    AdminUsageService,
    evalResultsProvider,
    // Query and path parameters are validated against the DTOs; anything undeclared is refused.
    { provide: APP_PIPE, useValue: new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }) },
    { provide: APP_FILTER, useClass: AgentErrorFilter },
  ],
})
export class AdminModule implements NestModule {
  /** The only admin routes with a JSON body (issue 38). */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(AdminJsonBody).forRoutes(AdminSchedulesController, AdminTriggersController);
  }
}
