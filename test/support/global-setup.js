// Jest global setup (plain JS: it runs outside the transform): drops earlier runs' test databases, migrates this
// run's template databases (test/support/database-templates.js), and makes the build runnable by the unprivileged
// user (startup.e2e runs the service as `nobody` when the tests run as root).
import { prepareTemplates } from './database-templates.js';
import dropTestDatabases from './drop-test-databases.js';
import { prepareReadableBuild } from './readable-build.js';

export default async function globalSetup() {
  await dropTestDatabases();
  await prepareTemplates();
  prepareReadableBuild();
}
