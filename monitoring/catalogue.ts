// Every metric olmq exports, with its type and labels: the one list the dashboards and alerts
// are written against (a query can only name a metric of this table: see ./promql.ts), and that
// a test holds against what a running system registers, so neither side can drift.
// Upstream OLM's metric names are kept where olmq serves the same thing (csv_*, install_plan_*,
// subscription_*, catalog_source_*, olm_resolution_*), with a `cluster` label added.

/** A Prometheus metric type, as `# TYPE` prints it. */
export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary';

/** One exported metric. */
export interface MetricSpec {
  readonly type: MetricType;
  readonly labels: readonly string[];
  /** Who exports it. */
  readonly from: string;
  /**
   * Whether an ordinary install (a catalog, one Subscription → CSV Succeeded) gives it a series;
   * the others count rarer events (dead letters, conflicts, warnings) and may have none yet.
   */
  readonly seenOnInstall: boolean;
}

const every = 'every function';

/** The catalogue, by metric name. */
export const metricCatalogue = {
  // Node's process metrics (prom-client's defaults), in every process: per function in
  // Kubernetes, where each Deployment runs one.
  process_cpu_seconds_total: {
    type: 'counter',
    labels: [],
    from: 'every process',
    seenOnInstall: true,
  },
  process_resident_memory_bytes: {
    type: 'gauge',
    labels: [],
    from: 'every process',
    seenOnInstall: true,
  },
  nodejs_heap_size_used_bytes: {
    type: 'gauge',
    labels: [],
    from: 'every process',
    seenOnInstall: true,
  },
  nodejs_eventloop_lag_p99_seconds: {
    type: 'gauge',
    labels: [],
    from: 'every process',
    seenOnInstall: true,
  },
  // The function host (shared/runtime), for every function: work, retries, dead letters.
  olmq_work_processed_total: {
    type: 'counter',
    labels: ['cluster', 'function', 'outcome'],
    from: every,
    seenOnInstall: true,
  },
  olmq_work_retried_total: {
    type: 'counter',
    labels: ['cluster', 'function'],
    from: every,
    seenOnInstall: false,
  },
  olmq_work_dead_lettered_total: {
    type: 'counter',
    labels: ['cluster', 'function', 'reason'],
    from: every,
    seenOnInstall: false,
  },
  olmq_dead_letters: {
    type: 'gauge',
    labels: ['cluster', 'function'],
    from: every,
    seenOnInstall: false,
  },
  olmq_dead_letters_redriven_total: {
    type: 'counter',
    labels: ['cluster', 'function', 'cause'],
    from: every,
    seenOnInstall: false,
  },
  olmq_write_conflicts_total: {
    type: 'counter',
    labels: ['cluster', 'function'],
    from: every,
    seenOnInstall: false,
  },
  olmq_work_lease_contended_total: {
    type: 'counter',
    labels: ['cluster', 'function'],
    from: every,
    seenOnInstall: false,
  },
  olmq_reconcile_duration_seconds: {
    type: 'histogram',
    labels: ['cluster', 'function'],
    from: every,
    seenOnInstall: true,
  },
  olmq_consumer_backlog: {
    type: 'gauge',
    labels: ['function', 'consumer', 'state'],
    from: every,
    seenOnInstall: true,
  },
  olmq_api_requests_total: {
    type: 'counter',
    labels: ['cluster', 'verb', 'code'],
    from: 'every process that calls the Kubernetes API',
    seenOnInstall: true,
  },
  olmq_nats_messages_total: {
    type: 'counter',
    labels: ['direction'],
    from: 'every process that connects to NATS',
    seenOnInstall: true,
  },
  // The watcher.
  olmq_watcher_changes_published_total: {
    type: 'counter',
    labels: ['cluster', 'kind', 'operation'],
    from: 'watcher',
    seenOnInstall: true,
  },
  olmq_watcher_leading: {
    type: 'gauge',
    labels: ['cluster'],
    from: 'watcher',
    seenOnInstall: true,
  },
  olmq_watcher_watch_events_total: {
    type: 'counter',
    labels: ['cluster', 'kind', 'event'],
    from: 'watcher',
    seenOnInstall: false,
  },
  // The watcher's (and olmq up's) upkeep of the JetStream streams.
  olmq_jetstream_stream_usage_ratio: {
    type: 'gauge',
    labels: ['stream'],
    from: 'watcher',
    seenOnInstall: true,
  },
  olmq_jetstream_delete_markers_purged: {
    type: 'gauge',
    labels: [],
    from: 'watcher',
    seenOnInstall: true,
  },
  olmq_lease_takeovers_total: {
    type: 'counter',
    labels: ['cluster'],
    from: 'watcher',
    seenOnInstall: true,
  },
  // Fencing (shared/bus/fencing.ts): a deposed watcher's late mirror writes, refused.
  olmq_mirror_fenced_writes_total: {
    type: 'counter',
    labels: ['cluster', 'reader'],
    from: 'watcher and every function',
    seenOnInstall: false,
  },
  // The catalog function.
  catalog_source_count: {
    type: 'gauge',
    labels: ['cluster'],
    from: 'catalog',
    seenOnInstall: true,
  },
  catalogsource_ready: {
    type: 'gauge',
    labels: ['cluster', 'namespace', 'name'],
    from: 'catalog',
    seenOnInstall: true,
  },
  catalog_source_snapshots_total: {
    type: 'counter',
    labels: ['cluster', 'namespace', 'name'],
    from: 'catalog',
    seenOnInstall: true,
  },
  olmq_catalog_index_packages: {
    type: 'gauge',
    labels: ['cluster', 'namespace', 'name'],
    from: 'catalog',
    seenOnInstall: true,
  },
  olmq_catalog_index_bundles: {
    type: 'gauge',
    labels: ['cluster', 'namespace', 'name'],
    from: 'catalog',
    seenOnInstall: true,
  },
  olmq_catalog_index_build_duration_seconds: {
    type: 'histogram',
    labels: ['cluster', 'source_type'],
    from: 'catalog',
    seenOnInstall: true,
  },
  olmq_catalog_warnings_total: {
    type: 'counter',
    labels: ['cluster', 'code'],
    from: 'catalog',
    seenOnInstall: false,
  },
  // The resolve function.
  olm_resolution_duration_seconds: {
    type: 'summary',
    labels: ['cluster', 'outcome'],
    from: 'resolve',
    seenOnInstall: true,
  },
  subscription_sync_total: {
    type: 'counter',
    labels: ['cluster', 'name', 'installed', 'channel', 'package', 'approval'],
    from: 'resolve',
    seenOnInstall: true,
  },
  subscription_count: { type: 'gauge', labels: ['cluster'], from: 'resolve', seenOnInstall: true },
  // The plan and install functions.
  install_plan_count: { type: 'gauge', labels: ['cluster'], from: 'plan', seenOnInstall: true },
  csv_succeeded: {
    type: 'gauge',
    labels: ['cluster', 'name', 'namespace', 'version'],
    from: 'install',
    seenOnInstall: true,
  },
  csv_abnormal: {
    type: 'gauge',
    labels: ['cluster', 'name', 'namespace', 'phase', 'reason', 'version'],
    from: 'install',
    seenOnInstall: true,
  },
  csv_count: { type: 'gauge', labels: ['cluster'], from: 'install', seenOnInstall: true },
  csv_upgrade_count: {
    type: 'counter',
    labels: ['cluster'],
    from: 'install',
    seenOnInstall: false,
  },
  installplan_warnings_total: {
    type: 'counter',
    labels: ['cluster'],
    from: 'install',
    seenOnInstall: false,
  },
  // The rbac and copy-csv functions.
  olmq_subscriptions: {
    type: 'gauge',
    labels: ['cluster', 'state'],
    from: 'plan',
    seenOnInstall: true,
  },
  olmq_install_plans: {
    type: 'gauge',
    labels: ['cluster', 'phase'],
    from: 'plan',
    seenOnInstall: true,
  },
  olmq_rbac_writes_total: {
    type: 'counter',
    labels: ['cluster', 'kind', 'op'],
    from: 'rbac',
    seenOnInstall: true,
  },
  olmq_copied_csv_writes_total: {
    type: 'counter',
    labels: ['cluster', 'operation'],
    from: 'copy-csv',
    seenOnInstall: false,
  },
} as const satisfies Record<string, MetricSpec>;

/** The name of a metric olmq exports. */
export type MetricName = keyof typeof metricCatalogue;

/** Whether `name` is a metric of the catalogue (or a histogram/summary series of one). */
export function catalogued(name: string): boolean {
  if (name in metricCatalogue) return true;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  const spec = (metricCatalogue as Record<string, MetricSpec | undefined>)[base];
  return spec !== undefined && (spec.type === 'histogram' || spec.type === 'summary');
}
