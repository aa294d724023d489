// Per-function detail: one function's work, latency and failures, its process (CPU, memory,
// event loop) and what only it counts (catalog builds, resolutions, RBAC and copied-CSV writes).
import { clusterSelector as c, metric, series } from '../promql.js';
import { labelValues, type DashboardSpec } from './grafana.js';

const f = 'function=~"$function"';

export const functionsDashboard: DashboardSpec = {
  uid: 'olmq-functions',
  title: 'olmq / Functions',
  description: 'One function in detail: work, latency, failures, its processes, its own counters.',
  variables: [
    {
      name: 'cluster',
      label: 'Cluster',
      query: labelValues('olmq_work_processed_total', 'cluster'),
    },
    {
      name: 'function',
      label: 'Function',
      query: labelValues('olmq_work_processed_total', 'function'),
    },
  ],
  rows: [
    {
      title: 'Work',
      panels: [
        {
          title: 'Reconciles per second by outcome',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (function, outcome) (rate(${metric('olmq_work_processed_total', `${c},${f}`)}[5m]))`,
              legend: '{{function}} {{outcome}}',
            },
          ],
        },
        {
          title: 'Reconcile latency',
          type: 'timeseries',
          unit: 's',
          queries: [0.5, 0.9, 0.99].map((q) => ({
            expr: `histogram_quantile(${q}, sum by (function, le) (rate(${series('olmq_reconcile_duration_seconds', 'bucket', `${c},${f}`)}[5m])))`,
            legend: `{{function}} p${Math.round(q * 100)}`,
          })),
        },
        {
          title: 'Backlog',
          type: 'timeseries',
          queries: [
            {
              expr: `max by (consumer, state) (${metric('olmq_consumer_backlog', f)})`,
              legend: '{{consumer}} {{state}}',
            },
          ],
        },
        {
          title: 'Conflicts, contention, retries, dead letters per second',
          type: 'timeseries',
          unit: 'ops',
          width: 24,
          queries: (
            [
              ['olmq_write_conflicts_total', 'conflicts'],
              ['olmq_work_lease_contended_total', 'contended'],
              ['olmq_work_retried_total', 'retried'],
              ['olmq_work_dead_lettered_total', 'dead-lettered'],
            ] as const
          ).map(([name, legend]) => ({
            expr: `sum by (function) (rate(${metric(name, `${c},${f}`)}[5m]))`,
            legend: `${legend} {{function}}`,
          })),
        },
      ],
    },
    {
      title: "Processes (job = the function's Service)",
      panels: [
        {
          title: 'CPU',
          type: 'timeseries',
          unit: 'percentunit',
          queries: [
            {
              expr: `sum by (job, instance) (rate(${metric('process_cpu_seconds_total')}[5m]))`,
              legend: '{{job}} {{instance}}',
            },
          ],
        },
        {
          title: 'Resident memory',
          type: 'timeseries',
          unit: 'bytes',
          queries: [
            { expr: metric('process_resident_memory_bytes'), legend: '{{job}} {{instance}}' },
          ],
        },
        {
          title: 'Event loop lag p99',
          type: 'timeseries',
          unit: 's',
          queries: [
            { expr: metric('nodejs_eventloop_lag_p99_seconds'), legend: '{{job}} {{instance}}' },
          ],
        },
      ],
    },
    {
      title: 'Own counters',
      panels: [
        {
          title: 'catalog: index build time p99',
          type: 'timeseries',
          unit: 's',
          queries: [
            {
              expr: `histogram_quantile(0.99, sum by (source_type, le) (rate(${series('olmq_catalog_index_build_duration_seconds', 'bucket', c)}[5m])))`,
              legend: '{{source_type}}',
            },
          ],
        },
        {
          title: 'catalog: snapshots per second',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (namespace, name) (rate(${metric('catalog_source_snapshots_total', c)}[5m]))`,
              legend: '{{namespace}}/{{name}}',
            },
          ],
        },
        {
          title: 'resolve: resolution time (quantiles)',
          type: 'timeseries',
          unit: 's',
          queries: [
            {
              expr: `max by (outcome, quantile) (${metric('olm_resolution_duration_seconds', c)})`,
              legend: '{{outcome}} q{{quantile}}',
            },
          ],
        },
        {
          title: 'resolve: Subscription syncs per second',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (package) (rate(${metric('subscription_sync_total', c)}[5m]))`,
              legend: '{{package}}',
            },
          ],
        },
        {
          title: 'rbac: writes per second',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (kind, op) (rate(${metric('olmq_rbac_writes_total', c)}[5m]))`,
              legend: '{{kind}} {{op}}',
            },
          ],
        },
        {
          title: 'copy-csv: writes per second',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (operation) (rate(${metric('olmq_copied_csv_writes_total', c)}[5m]))`,
              legend: '{{operation}}',
            },
          ],
        },
      ],
    },
  ],
};
