// The `olmq` subcommands: their words, options and what they run. Options are declared once
// here (see ./options.ts); --help and docs/configuration.md are generated from this table.
import { readFileSync } from 'node:fs';
import { functionNames } from '../functions/index.js';
import {
  logLevel,
  devclusterPort,
  metricsPort,
  globalCatalogNamespace,
  clusterAccess,
  dlqSelection,
  dlqOutput,
  dlqId,
  catalogSpecSchema,
  imageAccess,
} from './common-options.js';
import { natsConnectionOptions, streamOptions, upkeepOptions } from './nats-options.js';
export type { CatalogSpec } from './common-options.js';
import { option, type ConfigOf, type Options } from './options.js';

/** Exit codes of every olmq command. */
export const exitCodes = {
  ok: 0,
  /** The command ran and failed (or, for `olmq resolve`, the namespace is unsatisfiable). */
  failed: 1,
  /** Bad flags, environment variables or input files. */
  usage: 2,
} as const;

/** A subcommand of `olmq`. */
export interface Command<O extends Options = Options> {
  /** The words that select it, e.g. ["registry", "serve"]. */
  words: readonly string[];
  /** One line for the command list. */
  summary: string;
  /** Positional arguments in the usage line, e.g. "<function>". */
  positionals?: { usage: string; doc: string; choices?: readonly string[]; required: boolean };
  options: O;
}

function command<O extends Options>(spec: Command<O>): Command<O> {
  return spec;
}

/** Every olmq subcommand. */
export const commands = {
  up: command({
    words: ['up'],
    summary:
      'Run the whole system on one machine: devcluster, nats-server, watcher and every function.',
    options: {
      kubeconfig: option.optionalPath({
        flag: 'kubeconfig',
        env: 'OLMQ_KUBECONFIG',
        placeholder: 'FILE',
        kind: 'file',
        doc: 'Serve this cluster instead of starting the embedded devcluster.',
      }),
      kubeconfigOut: option.text({
        flag: 'kubeconfig-out',
        env: 'OLMQ_KUBECONFIG_OUT',
        placeholder: 'FILE',
        default: '.olmq/kubeconfig',
        doc: 'Where to write the devcluster admin kubeconfig.',
      }),
      port: devclusterPort,
      dataDir: option.text({
        flag: 'data-dir',
        env: 'OLMQ_DATA_DIR',
        placeholder: 'DIR',
        default: '.olmq/data',
        doc: 'Where the devcluster and the local nats-server keep their data across restarts.',
      }),
      ...natsConnectionOptions,
      natsUrl: option.optionalUrlList({
        flag: 'nats-url',
        env: 'NATS_URL',
        placeholder: 'URLS',
        schemes: ['nats', 'tls', 'ws', 'wss'],
        doc: 'Use these NATS servers (comma-separated) instead of starting a local nats-server.',
      }),
      ...streamOptions,
      ...upkeepOptions,
      globalCatalogNamespace,
      catalog: option.optionalText({
        flag: 'catalog',
        env: 'OLMQ_CATALOG',
        placeholder: 'DIR',
        doc: "File-Based Catalog served as CatalogSource olmq-example in the global catalog namespace (default: the repository's catalogs/example; none: no catalog).",
      }),
      metricsPort,
      logLevel,
    },
  }),
  devcluster: command({
    words: ['devcluster'],
    summary: 'Run the embedded Kubernetes-compatible API server in the foreground.',
    options: {
      port: devclusterPort,
      host: option.host({
        flag: 'host',
        env: 'OLMQ_DEVCLUSTER_HOST',
        placeholder: 'ADDRESS',
        default: '127.0.0.1',
        doc: 'Address to listen on.',
      }),
      kubeconfig: option.text({
        flag: 'kubeconfig',
        env: 'OLMQ_KUBECONFIG_OUT',
        placeholder: 'FILE',
        default: '.olmq/kubeconfig',
        doc: 'Where to write the admin kubeconfig.',
      }),
      dataDir: option.optionalText({
        flag: 'data-dir',
        env: 'OLMQ_DATA_DIR',
        placeholder: 'DIR',
        doc: 'Keep objects durably in this directory (default: in memory only).',
      }),
      podReadyDelay: option.integer({
        flag: 'pod-ready-delay',
        env: 'OLMQ_POD_READY_DELAY_MS',
        placeholder: 'MS',
        default: 1000,
        min: 0,
        max: 3_600_000,
        doc: 'Milliseconds before a simulated pod becomes ready.',
      }),
      logLevel,
    },
  }),
  watcher: command({
    words: ['watcher'],
    summary: "Mirror a cluster's OLM-relevant objects into NATS JetStream (leader-elected).",
    options: {
      ...clusterAccess,
      identity: option.optionalText({
        flag: 'identity',
        env: 'OLMQ_IDENTITY',
        placeholder: 'NAME',
        doc: 'Name of this replica in the Lease (default: host name and pid; in Kubernetes, the pod name).',
      }),
      leaseNamespace: option.text({
        flag: 'lease-namespace',
        env: 'OLMQ_LEASE_NAMESPACE',
        placeholder: 'NAMESPACE',
        default: 'olmq-system',
        doc: 'Namespace of the coordination.k8s.io Lease the replicas elect a leader on.',
      }),
      leaseDuration: option.integer({
        flag: 'lease-duration',
        env: 'OLMQ_LEASE_DURATION_SECONDS',
        placeholder: 'SECONDS',
        default: 15,
        min: 2,
        max: 600,
        doc: 'How long a standby waits for a silent leader before taking over.',
      }),
      watchStallTimeout: option.integer({
        flag: 'watch-stall-timeout',
        env: 'OLMQ_WATCH_STALL_TIMEOUT_SECONDS',
        placeholder: 'SECONDS',
        default: 150,
        min: 0,
        max: 86_400,
        doc: 'A watch without any event or bookmark for this long is given up as stalled and resumed (0: never).',
      }),
      resyncInterval: option.integer({
        flag: 'resync-interval',
        env: 'OLMQ_RESYNC_INTERVAL_SECONDS',
        placeholder: 'SECONDS',
        default: 21_600,
        min: 0,
        max: 604_800,
        doc: 'How often every kind is listed again and only what differs from the mirror is published (0: never).',
      }),
      ...upkeepOptions,
    },
  }),
  run: command({
    words: ['run'],
    summary: 'Run one OLM function as a horizontally scalable worker.',
    positionals: {
      usage: '<function>',
      doc: `The function to run: ${functionNames.join(', ')}.`,
      choices: functionNames,
      required: true,
    },
    options: {
      concurrency: option.integer({
        flag: 'concurrency',
        env: 'OLMQ_CONCURRENCY',
        placeholder: 'N',
        default: 4,
        min: 1,
        max: 1024,
        doc: 'Work items processed at once by this replica.',
      }),
      kubeApiQps: option.integer({
        flag: 'kube-api-qps',
        env: 'OLMQ_KUBE_API_QPS',
        placeholder: 'N',
        default: 200,
        min: 1,
        max: 100_000,
        doc: 'Requests per second this replica sends to each cluster API server, on average.',
      }),
      kubeApiBurst: option.integer({
        flag: 'kube-api-burst',
        env: 'OLMQ_KUBE_API_BURST',
        placeholder: 'N',
        default: 400,
        min: 1,
        max: 100_000,
        doc: 'Requests this replica may send at once above --kube-api-qps.',
      }),
      consumerInactive: option.integer({
        flag: 'consumer-inactive',
        env: 'OLMQ_CONSUMER_INACTIVE_SECONDS',
        placeholder: 'SECONDS',
        default: 3_600,
        min: 0,
        max: 2_592_000,
        doc: "NATS deletes a cluster's consumers of this function after this long without a pull, i.e. once no pool serves the cluster (0: never).",
      }),
      globalCatalogNamespace,
      ...clusterAccess,
    },
  }),
  resolve: command({
    words: ['resolve'],
    summary: 'Resolve Subscriptions against catalogs offline (dry run / upgrade preview).',
    options: {
      catalog: option.repeatedParsed(
        {
          flag: 'catalog',
          placeholder: 'NAME=DIR|IMAGE[,priority=N][,namespace=NS]',
          doc: 'A File-Based Catalog directory or catalog image (pulled directly; FBC found by its index.configs.v1 label), named as Subscriptions refer to it in spec.source; priority ranks it for dependencies (default 0); namespace defaults to the spec.sourceNamespace of the Subscriptions naming it.',
        },
        catalogSpecSchema,
      ),
      subscriptions: option.requiredText({
        flag: 'subscriptions',
        placeholder: 'FILE',
        doc: 'Subscription manifests (multi-document YAML or JSON).',
      }),
      installed: option.optionalText({
        flag: 'installed',
        placeholder: 'FILE',
        doc: 'ClusterServiceVersion manifests already installed in the namespace.',
      }),
      output: option.choice({
        flag: 'output',
        short: 'o',
        placeholder: 'FORMAT',
        values: ['text', 'json', 'yaml'],
        default: 'text',
        doc: 'Output format.',
      }),
      ...imageAccess,
      logLevel,
    },
  }),
  registryServe: command({
    words: ['registry', 'serve'],
    summary:
      'Serve the operator-registry gRPC API over a File-Based Catalog directory or catalog image.',
    options: {
      fbc: option.optionalText({
        flag: 'fbc',
        env: 'OLMQ_REGISTRY_FBC',
        placeholder: 'DIR',
        doc: 'File-Based Catalog directory to serve (.json/.yaml files below it; .indexignore honoured). One of --fbc and --image.',
      }),
      image: option.optionalText({
        flag: 'image',
        env: 'OLMQ_REGISTRY_IMAGE',
        placeholder: 'REF',
        doc: 'Catalog image to serve, pulled once at start (its FBC found by the index.configs.v1 label). One of --fbc and --image.',
      }),
      ...imageAccess,
      port: option.integer({
        flag: 'port',
        env: 'OLMQ_REGISTRY_PORT',
        placeholder: 'PORT',
        default: 50051,
        min: 0,
        max: 65535,
        doc: 'gRPC port (0 = any free port; the "serving" line says which).',
      }),
      host: option.host({
        flag: 'host',
        env: 'OLMQ_REGISTRY_HOST',
        placeholder: 'ADDRESS',
        default: '0.0.0.0',
        doc: 'Address to listen on (0.0.0.0: every IPv4 interface, as upstream registry pods; 127.0.0.1: this machine only).',
      }),
      logLevel,
    },
  }),
  packageserver: command({
    words: ['packageserver'],
    summary:
      'Serve packages.operators.coreos.com/v1 (PackageManifests) as an aggregated API over the catalogs in JetStream.',
    options: {
      kubeconfig: clusterAccess.kubeconfig,
      context: clusterAccess.context,
      cluster: clusterAccess.cluster,
      ...natsConnectionOptions,
      host: option.host({
        flag: 'host',
        env: 'OLMQ_PACKAGESERVER_HOST',
        placeholder: 'ADDRESS',
        default: '0.0.0.0',
        doc: 'Address the HTTPS API listens on.',
      }),
      port: option.integer({
        flag: 'port',
        env: 'OLMQ_PACKAGESERVER_PORT',
        placeholder: 'PORT',
        default: 5443,
        min: 0,
        max: 65535,
        doc: 'HTTPS port of the API (0 = any free port).',
      }),
      tlsCertFile: option.optionalPath({
        flag: 'tls-cert-file',
        env: 'OLMQ_PACKAGESERVER_TLS_CERT_FILE',
        placeholder: 'FILE',
        kind: 'file',
        doc: 'Serving certificate (PEM); a self-signed one for the Service is made when absent.',
      }),
      tlsKeyFile: option.optionalPath({
        flag: 'tls-key-file',
        env: 'OLMQ_PACKAGESERVER_TLS_KEY_FILE',
        placeholder: 'FILE',
        kind: 'file',
        doc: 'Key of the serving certificate (PEM); required with --tls-cert-file.',
      }),
      globalNamespace: option.text({
        flag: 'global-namespace',
        env: 'OLMQ_GLOBAL_CATALOG_NAMESPACE',
        placeholder: 'NAMESPACE',
        default: 'olm',
        doc: 'Global catalog namespace: its catalogs are visible from every namespace.',
      }),
      serviceNamespace: option.text({
        flag: 'service-namespace',
        env: 'OLMQ_PACKAGESERVER_SERVICE_NAMESPACE',
        placeholder: 'NAMESPACE',
        default: 'olmq-system',
        doc: 'Namespace of the Service the APIService points at (names in the self-signed certificate).',
      }),
      serviceName: option.text({
        flag: 'service-name',
        env: 'OLMQ_PACKAGESERVER_SERVICE_NAME',
        placeholder: 'NAME',
        default: 'packageserver',
        doc: 'Name of that Service.',
      }),
      servingSecret: option.optionalText({
        flag: 'serving-secret',
        env: 'OLMQ_PACKAGESERVER_SERVING_SECRET',
        placeholder: 'NAME',
        doc: 'Keep the self-signed serving certificate in this Secret (in --service-namespace) so replicas share it, and set the APIService caBundle to its CA.',
      }),
      register: option.switch({
        flag: 'register',
        env: 'OLMQ_PACKAGESERVER_REGISTER',
        doc: "Create the Service, Endpoints (this process's --host and --port) and APIService: for a server running outside the cluster.",
      }),
      metricsPort,
      logLevel,
    },
  }),
  version: command({
    words: ['version'],
    summary: 'Print the olmq version.',
    options: {},
  }),
  dlqList: command({
    words: ['dlq', 'list'],
    summary: 'List dead letters: work given up on, not handled yet.',
    options: { ...dlqSelection, output: dlqOutput, ...natsConnectionOptions, logLevel },
  }),
  dlqShow: command({
    words: ['dlq', 'show'],
    summary: 'Show one dead letter in full.',
    positionals: { ...dlqId, required: true },
    options: { output: dlqOutput, ...natsConnectionOptions, logLevel },
  }),
  dlqRedrive: command({
    words: ['dlq', 'redrive'],
    summary: 'Give dead letters another go now: by ID, function, cluster, key, or --all.',
    positionals: { ...dlqId, required: false },
    options: {
      ...dlqSelection,
      all: option.switch({ flag: 'all', doc: 'Redrive every dead letter.' }),
      output: dlqOutput,
      ...natsConnectionOptions,
      logLevel,
    },
  }),
} satisfies Record<string, Command>;

/** The typed config of one command. */
export type CommandConfig<K extends keyof typeof commands> = ConfigOf<
  (typeof commands)[K]['options']
>;

/** olmq's version, from package.json. */
export function olmqVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return manifest.version;
}
