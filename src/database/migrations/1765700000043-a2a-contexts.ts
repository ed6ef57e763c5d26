import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A2A contextIds a client made up (issue 43): each is the caller's own name for one of their sessions,
 * so the key is the owner with the name (another user's identical name is another conversation), and a
 * session has at most one name, which Tasks of that session show as their contextId.
 */
export class A2aContexts1765700000043 implements MigrationInterface {
  name = 'A2aContexts1765700000043';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE a2a_contexts (
      owner VARCHAR(320) NOT NULL,
      context_id VARCHAR(256) NOT NULL,
      session_id VARCHAR(36) NOT NULL UNIQUE REFERENCES sessions (id),
      created_at VARCHAR(30) NOT NULL,
      PRIMARY KEY (owner, context_id))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE a2a_contexts');
  }
}
