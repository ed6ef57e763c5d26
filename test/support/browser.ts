import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, which scripts/ensure-test-env.sh installs. */
const CHROMIUM = '/usr/bin/chromium';

/** Headless, and off the network but for the pages a test opens. */
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * A Chromium of its own for a test file (close it in the file's teardown, or with the stack's closeOnStop). Open
 * pages with `newPage()` or `newContext()`: each is a context of its own (cookies, storage).
 */
export async function openBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is required (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
