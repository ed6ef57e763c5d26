// Jest global teardown: this run's test databases (its PostgreSQL template among them), its SQLite template and its
// readable copy of the build go.
import { removeTemplates } from './database-templates.js';
import dropTestDatabases from './drop-test-databases.js';
import { removeReadableBuild } from './readable-build.js';

export default async function globalTeardown() {
  await dropTestDatabases();
  removeTemplates();
  removeReadableBuild();
}
