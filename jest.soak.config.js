/** The bounded soak, fault and fuzz suites (`npm run soak`), on top of the regular Jest setup. */
import base from './jest.config.js';

export default { ...base, testMatch: ['<rootDir>/test/soak/**/*.soak-spec.ts'], testTimeout: 600_000 };
