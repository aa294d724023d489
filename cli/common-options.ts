// The option sets several `olmq` subcommands share (cluster access, NATS, logging, ports,
// dead-letter selection, catalog images), declared once; ./commands.ts is the table of commands.
import { z } from 'zod';
import { logLevels } from '../shared/runtime/log.js';
import { natsConnectionOptions, streamOptions } from './nats-options.js';
import { option } from './options.js';

export const logLevel = option.choice({
  flag: 'log-level',
  env: 'OLMQ_LOG_LEVEL',
  placeholder: 'LEVEL',
  values: logLevels,
  default: 'info',
  doc: 'Minimum level of the JSON log lines written to stderr.',
});

export const devclusterPort = option.integer({
  flag: 'port',
  env: 'OLMQ_DEVCLUSTER_PORT',
  placeholder: 'PORT',
  default: 0,
  min: 0,
  max: 65535,
  doc: 'HTTPS port of the embedded devcluster (0 = any free port).',
});

export const metricsPort = option.integer({
  flag: 'metrics-port',
  env: 'OLMQ_METRICS_PORT',
  placeholder: 'PORT',
  default: 8080,
  min: 0,
  max: 65535,
  doc: 'Port of /metrics, /healthz and /readyz (0 = any free port).',
});

export const globalCatalogNamespace = option.text({
  flag: 'global-catalog-namespace',
  env: 'OLMQ_GLOBAL_CATALOG_NAMESPACE',
  placeholder: 'NAMESPACE',
  default: 'olm',
  doc: 'Namespace whose CatalogSources serve every namespace (upstream OLM: olm, or openshift-marketplace).',
});

export const clusterAccess = {
  kubeconfig: option.optionalText({
    flag: 'kubeconfig',
    env: 'KUBECONFIG',
    placeholder: 'PATH',
    doc: 'Kubeconfig file (every context is a cluster) or directory (every file is one, named after the file; `olmq run` follows files added, changed and removed); in-cluster credentials when absent.',
  }),
  context: option.optionalText({
    flag: 'context',
    env: 'OLMQ_CONTEXT',
    placeholder: 'NAME',
    doc: 'Serve only this context of the kubeconfig file.',
  }),
  cluster: option.optionalText({
    flag: 'cluster',
    env: 'OLMQ_CLUSTER',
    placeholder: 'ID',
    doc: 'Cluster id in messages and metrics, for a single cluster (default: the context name).',
  }),
  ...natsConnectionOptions,
  ...streamOptions,
  metricsPort,
  logLevel,
};

// `olmq dlq`: which dead letters (none of these: all), and how to print them.
export const dlqSelection = {
  function: option.optionalText({
    flag: 'function',
    placeholder: 'NAME',
    doc: 'Only dead letters of this function definition (queue), e.g. install-plan.',
  }),
  cluster: option.optionalText({
    flag: 'cluster',
    placeholder: 'ID',
    doc: 'Only dead letters of this cluster.',
  }),
  key: option.optionalText({
    flag: 'key',
    placeholder: 'WORDS',
    doc: "Only the dead letter of this work key, its words joined by '/', e.g. ns1/install-abc.",
  }),
};
export const dlqOutput = option.choice({
  flag: 'output',
  short: 'o',
  placeholder: 'FORMAT',
  values: ['table', 'json'],
  default: 'table',
  doc: 'Output format: a kubectl-style table (or description, for show), or JSON.',
});
export const dlqId = {
  usage: '<id>',
  doc: 'The ID (stream sequence) of a dead letter, as listed.',
};

/** One `--catalog` of `olmq resolve`: NAME=DIR[,priority=N][,namespace=NS]. */
export interface CatalogSpec {
  /** CatalogSource name. */
  readonly name: string;
  /** FBC directory, or a catalog image reference. */
  readonly dir: string;
  /** spec.priority. */
  readonly priority: number;
  /** CatalogSource namespace, or null to take the Subscriptions'. */
  readonly namespace: string | null;
}

export const catalogSpecSchema = z.string().transform((value, ctx): CatalogSpec => {
  const [head = '', ...rest] = value.split(',');
  const eq = head.indexOf('=');
  const name = eq < 0 ? '' : head.slice(0, eq);
  const dir = eq < 0 ? '' : head.slice(eq + 1);
  const bad = (message: string): CatalogSpec => {
    ctx.addIssue({ code: 'custom', message, input: value });
    return z.NEVER;
  };
  if (name === '' || dir === '') return bad('must be NAME=DIR|IMAGE[,priority=N][,namespace=NS]');
  let priority = 0;
  let namespace: string | null = null;
  for (const part of rest) {
    const [key, val = ''] = part.split('=', 2);
    if (key === 'priority' && /^-?\d+$/.test(val)) priority = Number(val);
    else if (key === 'namespace' && val !== '') namespace = val;
    else return bad(`unknown or bad setting "${part}" (expected priority=N or namespace=NS)`);
  }
  return { name, dir, priority, namespace };
});

/** Registry settings of the commands that pull catalog images themselves. */
export const imageAccess = {
  registryAuthFile: option.optionalText({
    flag: 'registry-auth-file',
    env: 'OLMQ_REGISTRY_AUTH_FILE',
    placeholder: 'FILE',
    doc: 'dockerconfigjson file with credentials for catalog images (as the catalog function).',
  }),
  registryCaFiles: option.optionalText({
    flag: 'registry-ca-files',
    env: 'OLMQ_REGISTRY_CA_FILES',
    placeholder: 'FILE[,FILE]',
    doc: 'PEM files of CAs trusted for registries, besides the system ones.',
  }),
};
