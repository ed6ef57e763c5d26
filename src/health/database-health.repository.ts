import { Injectable } from '@nestjs/common';
import { PlainSql } from '../database/plain-sql.js';

/** The readiness probe's one query. */
@Injectable()
export class DatabaseHealthRepository {
  constructor(private readonly sql: PlainSql) {}

  /** Resolves when the database answers a query. */
  async ping(): Promise<void> {
    await this.sql.all('SELECT 1');
  }
}
