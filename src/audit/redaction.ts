import { URL_USERINFO } from '../common/url-credentials.js';
import { boundForAudit } from './audit-bounds.js';

/** Shapes of secrets that must never reach the audit log (OWASP logging cheat sheet). */
const PATTERNS: [RegExp, string][] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, '[REDACTED PRIVATE KEY]'],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, '[REDACTED AWS KEY]'],
  [/\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b/g, '[REDACTED GITHUB TOKEN]'],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}\b/g, '[REDACTED GITHUB TOKEN]'],
  [/\bsk-[A-Za-z0-9_-]{20,}\b/g, '[REDACTED API KEY]'],
  [/\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, '[REDACTED JWT]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [REDACTED]'],
  [URL_USERINFO, '$1[REDACTED]@'],
  // The key word may end a longer name (`client_secret`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`), whose
  // `_` would defeat a word boundary right before the key word; a word after it (`token_count: 5`) keeps it out.
  // A match starts only where a name starts (not at every `\b` inside `a-b-c…`): one scan of each name, where
  // a start at each word boundary made a 2 500-character hyphenated string cost 4 ms instead of 0.01.
  [/(?<![\w-])([\w-]*?(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key))(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&,;]+)/gi, '$1$2[REDACTED]'],
];

/**
 * Text without any of these cannot match a pattern above (each pattern needs one of them, case aside):
 * one scan instead of nine for almost every string. Since issue 9 every key of an audit detail is
 * redacted too, which made the nine scans a visible part of an agent_status call.
 */
const MAY_HOLD_SECRET = /-----BEGIN|AKIA|ASIA|gh[pousr]_|github_pat_|sk-|eyJ|bearer|basic|:\/\/|password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key/i;

/** `text` with secret-shaped substrings and the given known secret values masked. */
function redactText(text: string, knownSecrets: readonly string[] = []): string {
  let masked = text;
  for (const secret of knownSecrets) if (secret.length >= 8) masked = masked.split(secret).join('[REDACTED]');
  // On the text the patterns see: with none of the triggers, no pattern matches and none replaces.
  if (!MAY_HOLD_SECRET.test(masked)) return masked;
  for (const [pattern, replacement] of PATTERNS) masked = masked.replace(pattern, replacement);
  return masked;
}

/**
 * A copy of `value` fit for the audit log: secrets masked (see `redactText`), Base64 image data
 * (`data_base64`, wherever it is) replaced by its length (its SHA-256 is recorded once accepted), and
 * the whole bounded in depth, entries and size: the log stores a bounded preview, not payloads.
 */
export function redact(value: unknown, knownSecrets: readonly string[] = []): unknown {
  return boundForAudit(value, {
    text: (text) => redactText(text, knownSecrets),
    replace: (key, item) => (key === 'data_base64' && typeof item === 'string' ? { base64_chars: item.length } : undefined),
  });
}
