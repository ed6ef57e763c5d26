const MAX_STRING = 8 * 1024;

/** Shapes of secrets that must never reach the audit log (OWASP logging cheat sheet). */
const PATTERNS: [RegExp, string][] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, '[REDACTED PRIVATE KEY]'],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, '[REDACTED AWS KEY]'],
  [/\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b/g, '[REDACTED GITHUB TOKEN]'],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}\b/g, '[REDACTED GITHUB TOKEN]'],
  [/\bsk-[A-Za-z0-9_-]{20,}\b/g, '[REDACTED API KEY]'],
  [/\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, '[REDACTED JWT]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [REDACTED]'],
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, '$1[REDACTED]@'],
  [/\b(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&,;]+)/gi, '$1$2[REDACTED]'],
];

/**
 * A copy of `value` fit for the audit log: secret-shaped substrings and the given known secret values
 * are masked, and long strings are cut (the log stores a bounded preview, not payloads).
 */
export function redact(value: unknown, knownSecrets: readonly string[] = []): unknown {
  if (typeof value === 'string') {
    let text = value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}… (${value.length} chars)` : value;
    for (const secret of knownSecrets) if (secret.length >= 8) text = text.split(secret).join('[REDACTED]');
    for (const [pattern, replacement] of PATTERNS) text = text.replace(pattern, replacement);
    return text;
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, knownSecrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redact(item, knownSecrets)]));
  }
  return value;
}
