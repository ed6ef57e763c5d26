import { describe, expect, it } from '@jest/globals';
import { validateConfig } from '../../src/config/agent-config.js';
import { withMigratedDatabase } from '../../src/database/data-source-options.js';
import { sqlStep } from '../../src/database/plain-sql.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const AT = '2026-12-06T10:00:00.000Z';
const SESSIONS = ['10000000-0000-4000-8000-000000000001', '10000000-0000-4000-8000-000000000002'];

/**
 * A unit's step that changes rows and returns them (a guard) answers with the rows it changed on both databases,
 * however the statement is written: TypeORM answers an UPDATE or DELETE on PostgreSQL with `[rows, rowCount]`,
 * told by the statement's command, not by its first word.
 */
describe.each<DatabaseKind>(['sqlite', 'postgres'])('PlainSql: a transaction step with RETURNING (%s)', (kind) => {
  it('answers with the changed rows, an UPDATE after a comment or in a WITH included', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      for (const id of SESSIONS) await sql.run('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)', [id, 'alice@example.com', AT]);
      const answers = await sql.transaction(function* () {
        const plain = yield sqlStep.all('UPDATE sessions SET owner = owner WHERE id = ? RETURNING id', [SESSIONS[0]]);
        const commented = yield sqlStep.all('-- a guard: the row locked by a no-op update\nUPDATE sessions SET owner = owner WHERE id = ? RETURNING id', [SESSIONS[1]]);
        const withClause = yield sqlStep.all(
          'WITH wanted AS (SELECT id FROM sessions WHERE owner = ?) UPDATE sessions SET owner = owner WHERE id IN (SELECT id FROM wanted) RETURNING id',
          ['alice@example.com'],
        );
        const none = yield sqlStep.all('UPDATE sessions SET owner = owner WHERE id = ? RETURNING id', ['10000000-0000-4000-8000-000000000009']);
        return { plain, commented, withClause, none };
      });
      expect(answers.plain).toEqual([{ id: SESSIONS[0] }]);
      expect(answers.commented).toEqual([{ id: SESSIONS[1] }]);
      expect((answers.withClause as { id: string }[]).map((row) => row.id).sort()).toEqual(SESSIONS);
      expect(answers.none).toEqual([]);
    });
  });
});
