/** `npm run test:unit`: the unit tests alone, with no database server (so without the PostgreSQL clean-up hooks). */
import base from './jest.config.js';

const { globalSetup, globalTeardown, ...rest } = base;

// Two workers on a two-core machine (Jest's default is one fewer than the cores): a few files wait on git or a
// child process, and the other worker runs meanwhile.
export default { ...rest, testMatch: ['<rootDir>/test/unit/**/*.spec.ts'], maxWorkers: Number(process.env.OAM_TEST_WORKERS ?? 2) };
