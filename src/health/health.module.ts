import { Module } from '@nestjs/common';
import { OllamaModule } from '../ollama/ollama.module.js';
import { HealthController } from './health.controller.js';

@Module({ imports: [OllamaModule], controllers: [HealthController] })
export class HealthModule {}
