import { randomBytes } from 'node:crypto';
import { AgentError } from '../common/agent-error.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { Caller } from '../identity/caller.js';
import { randomUUID } from 'node:crypto';
import type { SessionMode, UnattendedApprovals, UnattendedSource } from './unattended.js';

/** The rules schedules and triggers share: who sees one, which tier and notify URL it may name, how many one user may have. */
export class UnattendedRules {
  constructor(private readonly config: Pick<AgentConfig, 'ollama' | 'a2a' | 'scheduler'>) {}

  /** An admin sees every one; a user their own, and another's answers as a missing one. */
  visible<T extends UnattendedSource>(caller: Caller, source: T | null): T | null {
    return source && (caller.admin || source.owner.user === caller.user) ? source : null;
  }

  tier(tier: string): string {
    if (tier !== 'default' && !this.config.ollama.models.some(([name]) => name === tier)) {
      throw new AgentError(
        'invalid_input',
        `tier: must be default or one of ${this.config.ollama.models.map(([name]) => name).join(', ') || '(no other tiers: ollama.models is empty)'}`,
      );
    }
    return tier;
  }

  /** A notify URL under the one allowlist of outgoing pushes (checked again at every delivery). */
  notifyUrl(url: string): string {
    if (!URL.canParse(url) || !['http:', 'https:'].includes(new URL(url).protocol)) throw new AgentError('invalid_input', 'notify_url: must be an http:// or https:// URL');
    if (!this.config.a2a.push.allowedUrls.some((prefix) => url.startsWith(prefix))) {
      throw new AgentError('invalid_input', 'notify_url: must start with one of a2a.push.allowed_urls (the one allowlist for every outgoing push)');
    }
    return url;
  }

  /** What a new schedule or trigger of `caller` shares with the other kind: its owner, its work, its defaults, checked. */
  newSource(caller: Caller, input: UnattendedInput, now: string): UnattendedSource {
    const notifyUrl = input.notifyUrl === undefined ? null : this.notifyUrl(input.notifyUrl);
    return {
      id: randomUUID(),
      owner: { user: caller.user, groups: caller.groups, email: caller.email ?? null },
      name: input.name,
      request: input.request,
      sessionMode: input.session ?? 'new',
      sessionId: null,
      tier: this.tier(input.tier ?? 'default'),
      approvals: input.approvals ?? 'deny',
      notifyUrl,
      notifySecret: notifyUrl ? newSecret() : null,
      enabled: input.enabled ?? true,
      createdAt: now,
      updatedAt: now,
    };
  }

  room(owned: number, what: 'schedules' | 'triggers'): void {
    const limit = this.config.scheduler.maxPerUser;
    if (owned >= limit) throw new AgentError('invalid_input', `you already have ${owned} ${what}, the most one user may have (scheduler.max_per_user: ${limit})`);
  }
}

/** The fields of a new schedule's or trigger's body that both kinds have. */
export interface UnattendedInput {
  name: string;
  request: string;
  session?: SessionMode;
  tier?: string;
  enabled?: boolean;
  approvals?: UnattendedApprovals;
  notifyUrl?: string;
}

/** A secret shown once, when its schedule or trigger is made. */
export const newSecret = (prefix = '') => `${prefix}${randomBytes(24).toString('base64')}`;
