import { Cron } from 'croner';
import { AgentError } from '../common/agent-error.js';

/** What is wrong with a schedule's `cron` or `timezone`, by field; null when croner reads both. */
export function cronProblem(expression: string, timezone: string): { field: 'cron' | 'timezone'; message: string } | null {
  if (!isZone(timezone)) return { field: 'timezone', message: `"${shown(timezone)}" is not an IANA time zone name (e.g. Europe/Berlin, UTC)` };
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { field: 'cron', message: `expected five fields (minute to day of week) or six (seconds first), got ${fields}` };
  try {
    new Cron(expression, { timezone, mode: '5-or-6-parts' });
    return null;
  } catch (error) {
    return { field: 'cron', message: shown((error as Error).message) };
  }
}

/**
 * A schedule's `cron` and `timezone`, read by croner (never by hand): five fields (minute to day of
 * week) or six with seconds first, in an IANA zone. Daylight-saving changes behave as croner documents
 * them: a wall-clock time that a spring-forward skips runs once right after the gap, and one that a
 * fall-back repeats runs once. Used by the boot check of `schedules:` and by the scheduler alike.
 */
export class CronSpec {
  private constructor(private readonly cron: Cron) {}

  /** The schedule's expression and zone, or `invalid_input` naming the field (the edge answers 400). */
  static of(expression: string, timezone: string): CronSpec {
    const problem = cronProblem(expression, timezone);
    if (problem) throw new AgentError('invalid_input', `${problem.field}: ${problem.message}`);
    return new CronSpec(new Cron(expression, { timezone, mode: '5-or-6-parts' }));
  }

  /** The first fire strictly after `after`, or null when the expression never fires again. */
  next(after: Date): Date | null {
    return this.cron.nextRun(after);
  }

  /** The latest fire strictly before `at`, or null. */
  latestBefore(at: Date): Date | null {
    return this.cron.previousRuns(1, at)[0] ?? null;
  }
}

function isZone(timezone: string): boolean {
  if (timezone.length === 0 || timezone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Text someone chose, bounded and with control characters escaped, for an error message. */
const shown = (text: string) => JSON.stringify(text.slice(0, 200)).slice(1, -1);
