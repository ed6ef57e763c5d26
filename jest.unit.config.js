/** `npm run test:unit`: the unit tests alone, with no database server (so without the PostgreSQL clean-up hooks). */
import base from './jest.config.js';

const { globalSetup, globalTeardown, ...rest } = base;

export default { ...rest, testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] };
