import type { AgentConfig } from '../../config/agent-config.js';
import type { CheckLine } from '../../ollama/ollama-diagnosis.js';
import { IssuerMetadata, reasonOf } from './issuer-metadata.js';

const CHECK_TIMEOUT_MS = 10_000;

/**
 * `npm run doctor` in `auth.mode: oauth`: the issuer's metadata can be read (as the service reads it
 * at start-up), and its signing keys fetched; introspection, when configured, has an endpoint.
 * Nothing in the other modes.
 */
export async function checkIssuer(config: AgentConfig): Promise<CheckLine[]> {
  if (config.auth.mode !== 'oauth') return [];
  const settings = config.auth.oauth;
  let metadata: IssuerMetadata;
  try {
    metadata = await IssuerMetadata.discover(settings, CHECK_TIMEOUT_MS);
  } catch (error) {
    return [{ name: 'issuer', level: 'fail', message: `${reasonOf(error)}: check auth.oauth.issuer (the service will not start)` }];
  }
  const lines: CheckLine[] = [{ name: 'issuer', level: 'ok', message: `metadata of ${settings.issuer} read from ${metadata.documentUrl}` }];
  const jwksUrl = metadata.jwksUrl(settings);
  if (!jwksUrl) {
    lines.push({
      name: 'issuer keys',
      level: settings.introspection.clientId ? 'warn' : 'fail',
      message: 'the issuer publishes no jwks_uri and auth.oauth.jwks_url is empty: JWT access tokens cannot be verified',
    });
  } else {
    lines.push(await checkKeys(jwksUrl, settings.algorithms));
  }
  if (settings.introspection.clientId && !metadata.introspectionUrl(settings)) {
    lines.push({ name: 'introspection', level: 'fail', message: 'the issuer names no introspection_endpoint: set auth.oauth.introspection.url' });
  }
  return lines;
}

async function checkKeys(url: string, algorithms: string[]): Promise<CheckLine> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const { keys } = (await response.json()) as { keys?: { alg?: string; kty?: string; use?: string }[] };
    if (!Array.isArray(keys) || keys.length === 0) throw new Error('no keys in the set');
    const signing = keys.filter((key) => key.use !== 'enc' && (key.alg === undefined || algorithms.includes(key.alg)));
    if (signing.length === 0) return { name: 'issuer keys', level: 'fail', message: `${url}: no signing key for auth.oauth.algorithms (${algorithms.join(', ')})` };
    return { name: 'issuer keys', level: 'ok', message: `${signing.length} signing key${signing.length === 1 ? '' : 's'} at ${url}` };
  } catch (error) {
    return { name: 'issuer keys', level: 'fail', message: `${url} could not be fetched (${reasonOf(error)}): check auth.oauth.jwks_url` };
  }
}
