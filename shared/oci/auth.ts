// Registry authentication: the WWW-Authenticate challenge (Basic or Bearer), the token
// endpoint exchange of the distribution token spec, and credentials read from
// dockerconfigjson documents (the format of kubernetes.io/dockerconfigjson Secrets).
import { z } from 'zod';
import { OciError } from './errors.js';
import type { CredentialLookup, RegistryCredential } from './types.js';

/** A parsed WWW-Authenticate challenge. */
export interface Challenge {
  scheme: 'basic' | 'bearer';
  params: Record<string, string>;
}

/** Parses `Bearer realm="…",service="…",scope="…"` (or Basic); undefined for other schemes. */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*(\w+)\s*(.*)$/s.exec(header);
  const scheme = match?.[1]?.toLowerCase();
  if (scheme !== 'basic' && scheme !== 'bearer') return undefined;
  const params: Record<string, string> = {};
  const pair = /(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g;
  for (const m of (match?.[2] ?? '').matchAll(pair)) {
    const key = m[1];
    if (key !== undefined) params[key.toLowerCase()] = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
  }
  return { scheme, params };
}

/** The Authorization header for Basic auth. */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

const tokenAnswerSchema = z.object({
  token: z.string().optional(),
  access_token: z.string().optional(),
});

/** Parses a token endpoint's answer into the bearer token. */
export function tokenFromAnswer(body: Buffer, realm: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new OciError('BadResponse', `token endpoint ${realm} did not answer JSON`);
  }
  const answer = tokenAnswerSchema.safeParse(parsed);
  const token = answer.success ? (answer.data.token ?? answer.data.access_token) : undefined;
  if (token === undefined || token === '')
    throw new OciError('BadResponse', `token endpoint ${realm} answered no token`);
  return token;
}

const dockerAuthEntrySchema = z.object({
  auth: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  identitytoken: z.string().optional(),
});
const dockerConfigSchema = z.union([
  z.object({ auths: z.record(z.string(), dockerAuthEntrySchema) }),
  // The legacy .dockercfg layout: the entries without the `auths` wrapper.
  z.record(z.string(), dockerAuthEntrySchema),
]);

const dockerHubAliases = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/** The registry host a dockerconfigjson key names (`https://index.docker.io/v1/` → docker.io). */
export function registryOfConfigKey(key: string): string {
  const host = key.replace(/^[a-z]+:\/\//i, '').split('/')[0] ?? '';
  return dockerHubAliases.has(host) ? 'docker.io' : host;
}

/**
 * Reads one or more dockerconfigjson documents into a lookup by registry host. Earlier
 * documents win, as kubelet does with a pod's pull secrets. `source` names the document in
 * error messages (e.g. the Secret).
 */
export function credentialsFromDockerConfigs(
  documents: readonly { source: string; json: string }[],
): CredentialLookup {
  const found = new Map<string, RegistryCredential>();
  for (const { source, json } of documents) {
    let raw: unknown;
    try {
      raw = JSON.parse(json);
    } catch {
      throw new OciError('BadCredentials', `${source}: not valid dockerconfigjson (bad JSON)`);
    }
    const parsed = dockerConfigSchema.safeParse(raw);
    if (!parsed.success)
      throw new OciError('BadCredentials', `${source}: not valid dockerconfigjson`);
    const entries =
      'auths' in parsed.data && typeof parsed.data.auths === 'object'
        ? (parsed.data.auths as Record<string, z.infer<typeof dockerAuthEntrySchema>>)
        : (parsed.data as Record<string, z.infer<typeof dockerAuthEntrySchema>>);
    for (const [key, entry] of Object.entries(entries)) {
      const registry = registryOfConfigKey(key);
      if (found.has(registry)) continue;
      const credential = credentialOf(entry, `${source} (${key})`);
      if (credential !== undefined) found.set(registry, credential);
    }
  }
  return (registry) => found.get(dockerHubAliases.has(registry) ? 'docker.io' : registry);
}

function credentialOf(
  entry: z.infer<typeof dockerAuthEntrySchema>,
  where: string,
): RegistryCredential | undefined {
  if (entry.identitytoken !== undefined && entry.identitytoken !== '')
    return { kind: 'identityToken', token: entry.identitytoken };
  if (entry.username !== undefined && entry.password !== undefined)
    return { kind: 'basic', username: entry.username, password: entry.password };
  if (entry.auth !== undefined && entry.auth !== '') {
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0)
      throw new OciError('BadCredentials', `${where}: "auth" is not base64 of user:password`);
    return { kind: 'basic', username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return undefined;
}

/** Combines lookups: the first that knows a registry wins. */
export function firstCredential(...lookups: (CredentialLookup | undefined)[]): CredentialLookup {
  return (registry) => {
    for (const lookup of lookups) {
      const found = lookup?.(registry);
      if (found !== undefined) return found;
    }
    return undefined;
  };
}
