/**
 * What `agent.approvals.allow` may hold, checked at boot with the rest of the config: plain words and
 * `*`, naming a command. How a pattern then matches a command is the approvals' business
 * (`CommandAllowlist` in approvals/command-pattern.ts).
 */

/** Why a configured pattern is unusable, or null when it is fine. */
export function patternProblem(pattern: string): string | null {
  if (pattern.trim() === '') return 'must not be empty';
  if (/^[\s*]+$/.test(pattern)) return 'must name a command (a bare * would allow everything)';
  if (/[\x00-\x1f\x7f;&|<>()`$]/.test(pattern)) return `"${pattern}" contains shell syntax; patterns are plain words and *`;
  return null;
}
