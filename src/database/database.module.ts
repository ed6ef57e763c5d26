import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AgentConfig } from '../config/agent-config.js';
import { dataSourceOptions } from './data-source-options.js';
import { PlainSql } from './plain-sql.js';
import { UnitOfWork } from './unit-of-work.js';
import { WalCheckpointer } from './wal-checkpointer.js';

/**
 * The connection and the two ways to it: PlainSql for repositories (the only code that queries),
 * UnitOfWork for what must commit together. Global, so each feature module's repositories get them.
 * Each feature module registers the entities it owns with `TypeOrmModule.forFeature`.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(database: AgentConfig['database']): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot({ ...dataSourceOptions(database), autoLoadEntities: true })],
      providers: [{ provide: PlainSql, inject: [getDataSourceToken()], useFactory: (dataSource: DataSource) => new PlainSql(dataSource) }, UnitOfWork, WalCheckpointer],
      exports: [PlainSql, UnitOfWork],
    };
  }
}
