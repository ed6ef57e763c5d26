import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SessionEntity } from './session.entity.js';
import { SessionsRepository } from './sessions.repository.js';
import { SessionsService } from './sessions.service.js';

@Module({ imports: [TypeOrmModule.forFeature([SessionEntity])], providers: [SessionsRepository, SessionsService], exports: [SessionsService] })
export class SessionsModule {}
