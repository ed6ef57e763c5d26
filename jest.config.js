import { swcOptions } from './scripts/swc-options.js';

/** Jest 30 in native ESM mode; requires NODE_OPTIONS=--experimental-vm-modules (set in .npmrc). */
export default {
  testEnvironment: 'node',
  rootDir: '.',
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  // TS sources import siblings as './x.js' (nodenext); map them back to the .ts file for Jest.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testTimeout: 30000,
  // Drops the per-test PostgreSQL databases (oam_*) of this and earlier runs; makes the build readable to nobody.
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  // The same SWC settings as the build's (scripts/swc-options.js), with the maps inline for Jest's stack traces.
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcOptions, sourceMaps: 'inline' }] },
};
