/**
 * `npm test`: every suite in one Jest run, in parallel workers. Two projects: `sqlite` (unit, medium and e2e
 * suites; e2e on a SQLite file) and `postgres` (the e2e suites again on PostgreSQL, a fresh database each, but for
 * the one that never reads OAM_TEST_DB). Each
 * e2e file starts its own scripted Ollama and service on free ports, with its own directories and databases, so
 * files are independent; a worker runs one file at a time. OAM_TEST_WORKERS sets how many (default 4: e2e files
 * mostly wait on their service, so more workers than this machine's two cores keep both busy).
 */
import base from './jest.config.js';

const { globalSetup, globalTeardown, testTimeout, ...project } = base;
const e2e = '<rootDir>/test/e2e/**/*.e2e-spec.ts';

export default {
  globalSetup,
  globalTeardown,
  testTimeout,
  maxWorkers: Number(process.env.OAM_TEST_WORKERS ?? 4),
  projects: [
    {
      ...project,
      displayName: 'sqlite',
      testMatch: ['<rootDir>/test/unit/**/*.spec.ts', '<rootDir>/test/medium/**/*.spec.ts', e2e],
      setupFiles: ['<rootDir>/test/support/database-kind/sqlite.ts'],
    },
    {
      ...project,
      displayName: 'postgres',
      testMatch: [e2e],
      // The README's quick start, the container's build and the packed package run on their own configuration
      // (embedded SQLite) whatever OAM_TEST_DB says, and `npm run eval` brings its own SQLite database: a second run
      // of them here would repeat the same test on the same inputs, a full build and start included.
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/(first-run-quickstart|container-build|package-install|eval)\\.e2e-spec\\.ts$'],
      setupFiles: ['<rootDir>/test/support/database-kind/postgres.ts'],
    },
  ],
};
