// The options of every command that connects to NATS: the server list, credentials and TLS
// (named as the `nats` CLI names its environment variables), and how olmq's streams and KV
// buckets are replicated and placed. `natsSettingsOf` checks the combinations one option
// alone cannot (a user needs a password, a certificate its key).
import type { BackboneOptions } from '../shared/bus/backbone.js';
import {
  NatsConnectError,
  describeRefusal,
  natsIdentity,
  permissionRefusalIn,
  type NatsConnectionSettings,
} from '../system/nats.js';
import { inboxPrefixOf } from '../shared/bus/permissions.js';
import { option, type ConfigIssue } from './options.js';

const natsSchemes = ['nats', 'tls', 'ws', 'wss'];

/** How to reach and authenticate to NATS. `natsUrl` is replaced per command where it differs. */
export const natsConnectionOptions = {
  natsUrl: option.urlList({
    flag: 'nats-url',
    env: 'NATS_URL',
    placeholder: 'URLS',
    schemes: natsSchemes,
    default: 'nats://127.0.0.1:4222',
    doc: 'NATS servers with JetStream, comma-separated (any server of a cluster; the client fails over to the others). tls:// requires TLS.',
  }),
  natsUser: option.optionalText({
    flag: 'nats-user',
    env: 'NATS_USER',
    placeholder: 'NAME',
    doc: 'NATS user name (with --nats-password).',
  }),
  natsPassword: option.optionalText({
    flag: 'nats-password',
    env: 'NATS_PASSWORD',
    placeholder: 'SECRET',
    doc: 'Password of --nats-user; prefer the environment variable to the flag.',
  }),
  natsToken: option.optionalText({
    flag: 'nats-token',
    env: 'NATS_TOKEN',
    placeholder: 'SECRET',
    doc: 'NATS authentication token; prefer the environment variable to the flag.',
  }),
  natsNkey: option.optionalPath({
    flag: 'nats-nkey',
    env: 'NATS_NKEY',
    placeholder: 'FILE',
    kind: 'file',
    doc: 'File holding the nkey seed (SU...) to authenticate with.',
  }),
  natsCreds: option.optionalPath({
    flag: 'nats-creds',
    env: 'NATS_CREDS',
    placeholder: 'FILE',
    kind: 'file',
    doc: 'NATS credentials file (JWT and nkey seed); re-read at every reconnect, so it can be rotated.',
  }),
  natsCa: option.optionalPath({
    flag: 'nats-tls-ca',
    env: 'NATS_CA',
    placeholder: 'FILE',
    kind: 'file',
    doc: 'CA certificates (PEM) to verify the NATS servers with; turns TLS on.',
  }),
  natsCert: option.optionalPath({
    flag: 'nats-tls-cert',
    env: 'NATS_CERT',
    placeholder: 'FILE',
    kind: 'file',
    doc: 'Client certificate (PEM) for servers that verify clients (with --nats-tls-key).',
  }),
  natsKey: option.optionalPath({
    flag: 'nats-tls-key',
    env: 'NATS_KEY',
    placeholder: 'FILE',
    kind: 'file',
    doc: 'Key (PEM) of --nats-tls-cert.',
  }),
};

/** How olmq's JetStream streams and KV buckets are replicated and placed. */
export const streamOptions = {
  streamReplicas: option.optionalInteger({
    flag: 'stream-replicas',
    env: 'OLMQ_STREAM_REPLICAS',
    placeholder: 'N',
    min: 1,
    max: 5,
    doc: 'Replicas of every olmq stream and KV bucket: 1 on one server, 3 on a cluster. Existing streams are changed to it; when absent, they keep theirs and new ones get 1.',
  }),
  streamCluster: option.optionalText({
    flag: 'stream-cluster',
    env: 'OLMQ_STREAM_CLUSTER',
    placeholder: 'NAME',
    doc: 'Place new streams and buckets in this NATS cluster (of a super-cluster).',
  }),
  streamTags: option.list({
    flag: 'stream-tags',
    env: 'OLMQ_STREAM_TAGS',
    placeholder: 'TAG',
    doc: 'Place new streams and buckets on servers with these tags (server_tags).',
  }),
};

/** How often the mirror's delete markers are purged, and from what age. */
export const upkeepOptions = {
  purgeDeletesAfter: option.duration({
    flag: 'purge-deletes-after',
    env: 'OLMQ_PURGE_DELETES_AFTER',
    placeholder: 'DURATION',
    default: '1h',
    minMs: 60_000,
    maxMs: 30 * 86_400_000,
    doc: "Purge a deleted object's marker from the mirror once it is this old (checked every tenth of it); readers that were away longer re-list.",
  }),
};

/** The parsed connection options (of natsConnectionOptions, natsUrl possibly absent). */
export interface NatsConnectionConfig {
  readonly natsUrl: readonly string[] | undefined;
  readonly natsUser: string | undefined;
  readonly natsPassword: string | undefined;
  readonly natsToken: string | undefined;
  readonly natsNkey: string | undefined;
  readonly natsCreds: string | undefined;
  readonly natsCa: string | undefined;
  readonly natsCert: string | undefined;
  readonly natsKey: string | undefined;
}

/** The parsed stream options. */
export interface StreamConfig {
  readonly streamReplicas: number | undefined;
  readonly streamCluster: string | undefined;
  readonly streamTags: readonly string[];
}

const flags = (...keys: (keyof typeof natsConnectionOptions)[]): string =>
  keys.map((k) => `--${natsConnectionOptions[k].flag}`).join(', ');

/** Problems of option combinations; empty when the settings can be used. */
export function natsSettingsProblems(config: NatsConnectionConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const methods = (['natsUser', 'natsToken', 'natsNkey', 'natsCreds'] as const).filter(
    (k) => config[k] !== undefined,
  );
  if (methods.length > 1)
    issues.push({
      source: flags(...methods),
      message: 'choose one way to authenticate (user and password, token, nkey or creds)',
    });
  if (config.natsUser !== undefined && config.natsPassword === undefined)
    issues.push({ source: '--nats-password', message: 'is required with --nats-user' });
  if (config.natsPassword !== undefined && config.natsUser === undefined)
    issues.push({ source: '--nats-user', message: 'is required with --nats-password' });
  if ((config.natsCert === undefined) !== (config.natsKey === undefined))
    issues.push({ source: flags('natsCert', 'natsKey'), message: 'go together' });
  return issues;
}

/** The connection settings of parsed options (check natsSettingsProblems first). */
export function natsSettingsOf(
  config: NatsConnectionConfig,
  servers: readonly string[],
  component?: string,
): NatsConnectionSettings {
  return {
    servers,
    ...(component === undefined ? {} : { inboxPrefix: inboxPrefixOf(component) }),
    user: config.natsUser,
    password: config.natsPassword,
    token: config.natsToken,
    nkeySeedFile: config.natsNkey,
    credsFile: config.natsCreds,
    tlsCaFile: config.natsCa,
    tlsCertFile: config.natsCert,
    tlsKeyFile: config.natsKey,
  };
}

/** The backbone options the stream options ask for. */
export function backboneOptionsOf(config: StreamConfig): Partial<BackboneOptions> {
  const placement =
    config.streamCluster === undefined && config.streamTags.length === 0
      ? undefined
      : { cluster: config.streamCluster ?? '', tags: [...config.streamTags] };
  return {
    ...(config.streamReplicas === undefined ? {} : { replicas: config.streamReplicas }),
    ...(placement === undefined ? {} : { placement }),
  };
}

/**
 * The connection settings of `command`'s options, or undefined after writing to stderr why
 * they cannot be used together (the command exits 2).
 */
export function natsSettingsFor(
  command: string,
  config: NatsConnectionConfig,
  servers: readonly string[],
  component: string,
): NatsConnectionSettings | undefined {
  const problems = natsSettingsProblems(config);
  if (problems.length === 0) return natsSettingsOf(config, servers, component);
  for (const p of problems) process.stderr.write(`${command}: ${p.source}: ${p.message}\n`);
  return undefined;
}

/**
 * Writes what went wrong with NATS for `command` and returns true when `error` is NATS refusing
 * the connection or a subject (the command exits 1); false for anything else.
 */
export function reportNatsFailure(
  command: string,
  error: unknown,
  settings: NatsConnectionSettings,
): boolean {
  if (error instanceof NatsConnectError) {
    process.stderr.write(`${command}: ${error.message}\n`);
    return true;
  }
  const refusal = permissionRefusalIn(error);
  if (refusal === undefined) return false;
  process.stderr.write(`${command}: ${describeRefusal(refusal, natsIdentity(settings))}\n`);
  return true;
}
