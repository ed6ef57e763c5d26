import { Module } from '@nestjs/common';
import { OllamaGateway } from './ollama.gateway.js';

@Module({ providers: [OllamaGateway], exports: [OllamaGateway] })
export class OllamaModule {}
