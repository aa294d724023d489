// How the package server trusts a request, as any aggregated API server does:
//
// - Authentication: the kube-apiserver's aggregator calls it over TLS with its front-proxy
//   client certificate and names the end user in request headers (X-Remote-User,
//   X-Remote-Group, X-Remote-Extra-*). The headers are believed only when the connection's
//   client certificate chains to the request-header CA and its common name is one of the allowed
//   names; both come from the ConfigMap kube-system/extension-apiserver-authentication, which
//   kube-apiserver (and the devcluster) publish. Anything else is 401.
// - Authorization: a SubjectAccessReview per distinct request (verb, namespace, name), asked of
//   the cluster and cached briefly, as client-go's delegating authorizer does.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { KubeClient } from '../shared/kube/client.js';

/** Where the request-header settings are published. */
export const authenticationConfigMap = {
  namespace: 'kube-system',
  name: 'extension-apiserver-authentication',
} as const;

/** The request-header settings of a cluster. */
export interface RequestHeaderConfig {
  /** CA bundle (PEM) front-proxy client certificates chain to. */
  clientCaPem: string;
  /** Common names a front-proxy certificate may carry; empty allows any. */
  allowedNames: readonly string[];
  /** Headers naming the user (first present wins). */
  usernameHeaders: readonly string[];
  /** Headers naming groups (all values). */
  groupHeaders: readonly string[];
  /** Prefixes of headers carrying extra attributes. */
  extraHeaderPrefixes: readonly string[];
}

/** The request-header settings are missing or unreadable; says what to fix. */
export class RequestHeaderConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RequestHeaderConfigError';
  }
}

function jsonList(value: string | undefined, fallback: readonly string[]): readonly string[] {
  if (value === undefined || value.trim() === '') return fallback;
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed) && parsed.every((v) => typeof v === 'string')) return parsed;
  } catch {
    // kube-apiserver writes JSON arrays; anything else is taken as one comma-separated list.
  }
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** Parses the ConfigMap's data. */
export function requestHeaderConfigFrom(
  data: Readonly<Record<string, string>>,
): RequestHeaderConfig {
  const clientCaPem = data['requestheader-client-ca-file'] ?? '';
  if (!clientCaPem.includes('BEGIN CERTIFICATE')) {
    throw new RequestHeaderConfigError(
      `${authenticationConfigMap.namespace}/${authenticationConfigMap.name} has no requestheader-client-ca-file: the cluster does not aggregate APIs (kube-apiserver needs --requestheader-client-ca-file)`,
    );
  }
  return {
    clientCaPem,
    allowedNames: jsonList(data['requestheader-allowed-names'], []),
    usernameHeaders: jsonList(data['requestheader-username-headers'], ['X-Remote-User']),
    groupHeaders: jsonList(data['requestheader-group-headers'], ['X-Remote-Group']),
    extraHeaderPrefixes: jsonList(data['requestheader-extra-headers-prefix'], ['X-Remote-Extra-']),
  };
}

/** Reads the request-header settings from the cluster. */
export async function loadRequestHeaderConfig(client: KubeClient): Promise<RequestHeaderConfig> {
  const configMap = await client.get<{
    apiVersion: string;
    kind: string;
    metadata: Record<string, unknown>;
    data?: Record<string, string>;
  }>({ apiVersion: 'v1', kind: 'ConfigMap', ...authenticationConfigMap });
  if (configMap === undefined) {
    throw new RequestHeaderConfigError(
      `ConfigMap ${authenticationConfigMap.namespace}/${authenticationConfigMap.name} does not exist: the cluster does not aggregate APIs`,
    );
  }
  return requestHeaderConfigFrom(configMap.data ?? {});
}

/** The end user of a request. */
export interface RequestUser {
  username: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** Outcome of authenticating one request. */
export type Authentication = { ok: true; user: RequestUser } | { ok: false; message: string };

function commonNameOf(socket: TLSSocket): string | undefined {
  const certificate = socket.getPeerCertificate();
  const cn = (certificate.subject as unknown as Record<string, string | string[] | undefined>)[
    'CN'
  ];
  return Array.isArray(cn) ? cn[0] : cn;
}

/** Authenticates a request made through the aggregator (see the module comment). */
export function authenticateFrontProxy(
  req: IncomingMessage,
  config: RequestHeaderConfig,
): Authentication {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) {
    return {
      ok: false,
      message: 'a client certificate signed by the request-header CA is required',
    };
  }
  const cn = commonNameOf(socket) ?? '';
  if (config.allowedNames.length > 0 && !config.allowedNames.includes(cn)) {
    return {
      ok: false,
      message: `client certificate common name "${cn}" is not an allowed front proxy`,
    };
  }
  const header = (name: string): string[] => {
    const value = req.headersDistinct[name.toLowerCase()];
    return value === undefined ? [] : value;
  };
  const username = config.usernameHeaders
    .map((h) => header(h)[0])
    .find((v) => v !== undefined && v !== '');
  if (username === undefined) return { ok: false, message: 'no user named in the request headers' };
  const groups = config.groupHeaders.flatMap(header);
  const extra: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    const prefix = config.extraHeaderPrefixes.find((p) => name.startsWith(p.toLowerCase()));
    if (prefix === undefined || values === undefined) continue;
    extra[decodeURIComponent(name.slice(prefix.length))] = values;
  }
  return { ok: true, user: { username, groups, extra } };
}

/** What a request asks to do, for authorization. */
export interface RequestAction {
  verb: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  group: string;
  version: string;
}

/** Answers SubjectAccessReviews, caching each answer for `ttlMs`. */
export class DelegatingAuthorizer {
  readonly #cache = new Map<string, { allowed: boolean; reason: string; until: number }>();

  constructor(
    private readonly client: KubeClient,
    private readonly ttlMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `user` may perform `action`, and why not. */
  async authorize(
    user: RequestUser,
    action: RequestAction,
  ): Promise<{ allowed: boolean; reason: string }> {
    // system:masters may do anything, as kube's authorizer chain says.
    if (user.groups.includes('system:masters')) return { allowed: true, reason: '' };
    const key = JSON.stringify([user, action]);
    const cached = this.#cache.get(key);
    const now = this.now();
    if (cached !== undefined && cached.until > now) return cached;
    const review = (await this.client.request(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      'create',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          groups: user.groups,
          extra: user.extra,
          resourceAttributes: {
            verb: action.verb,
            namespace: action.namespace,
            group: action.group,
            version: action.version,
            resource: action.resource,
            subresource: action.subresource,
            name: action.name,
          },
        },
      },
    )) as { status?: { allowed?: boolean; reason?: string } };
    const answer = {
      allowed: review.status?.allowed === true,
      reason: review.status?.reason ?? '',
      until: now + this.ttlMs,
    };
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(key, answer);
    return answer;
  }
}
