import { Module } from '@nestjs/common';
import { OllamaModule } from '../ollama/ollama.module.js';
import { AgentRunner } from './agent-runner.js';
import { DirectChatAgent } from './direct-chat.agent.js';

@Module({
  imports: [OllamaModule],
  providers: [{ provide: AgentRunner, useClass: DirectChatAgent }],
  exports: [AgentRunner],
})
export class AgentModule {}
