/**
 * Asks `probe` until it answers (anything but undefined) and returns that answer: a wait for a condition the test
 * can observe (a status, a reply, a row), not for a time. Pauses `everyMs` between tries; past `timeoutMs` it
 * throws, naming `what` it waited for and what `lastSeen` says of the state (for the failure message).
 */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  { timeoutMs = 15_000, everyMs = 30, lastSeen }: { timeoutMs?: number; everyMs?: number; lastSeen?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await probe();
    if (answer !== undefined) return answer;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}${lastSeen ? `; last seen: ${lastSeen()}` : ''}`);
    await new Promise((done) => setTimeout(done, everyMs));
  }
}
