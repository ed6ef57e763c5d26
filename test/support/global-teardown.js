// Jest global teardown: this run's test databases and its readable copy of the build go.
import dropTestDatabases from './drop-test-databases.js';
import { removeReadableBuild } from './readable-build.js';

export default async function globalTeardown() {
  await dropTestDatabases();
  removeReadableBuild();
}
