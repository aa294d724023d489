// The backbone: the message flow every function shares — consumer backlog, reconcile rate and
// latency per function, conflicts, retries, dead letters, lease contention, the watcher, and
// the Kubernetes API traffic.
import { clusterSelector as c, metric, series } from '../promql.js';
import { labelValues, type DashboardSpec } from './grafana.js';

export const backboneDashboard: DashboardSpec = {
  uid: 'olmq-backbone',
  title: 'olmq / Backbone',
  description:
    'Work queues, reconciles, conflicts and dead letters of every function; the watcher.',
  variables: [
    {
      name: 'cluster',
      label: 'Cluster',
      query: labelValues('olmq_work_processed_total', 'cluster'),
    },
  ],
  rows: [
    {
      title: 'Work',
      panels: [
        {
          title: 'Consumer backlog (pending)',
          type: 'timeseries',
          description: 'Work not yet delivered, per function consumer; every replica reports it.',
          queries: [
            {
              expr: `max by (function, consumer) (${metric('olmq_consumer_backlog', 'state="pending"')})`,
              legend: '{{consumer}}',
            },
          ],
        },
        {
          title: 'In flight',
          type: 'timeseries',
          queries: [
            {
              expr: `max by (function) (${metric('olmq_consumer_backlog', 'state="in_flight"')})`,
              legend: '{{function}}',
            },
          ],
        },
        {
          title: 'Reconciles per second',
          type: 'timeseries',
          unit: 'ops',
          stacked: true,
          queries: [
            {
              expr: `sum by (function) (rate(${metric('olmq_work_processed_total', c)}[5m]))`,
              legend: '{{function}}',
            },
          ],
        },
        {
          title: 'Reconcile latency p99',
          type: 'timeseries',
          unit: 's',
          queries: [
            {
              expr: `histogram_quantile(0.99, sum by (function, le) (rate(${series('olmq_reconcile_duration_seconds', 'bucket', c)}[5m])))`,
              legend: '{{function}}',
            },
          ],
        },
        {
          title: 'Reconcile latency p50',
          type: 'timeseries',
          unit: 's',
          queries: [
            {
              expr: `histogram_quantile(0.5, sum by (function, le) (rate(${series('olmq_reconcile_duration_seconds', 'bucket', c)}[5m])))`,
              legend: '{{function}}',
            },
          ],
        },
        {
          title: 'Failed reconciles per second',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (function) (rate(${metric('olmq_work_processed_total', `${c},outcome="failure"`)}[5m]))`,
              legend: '{{function}}',
            },
          ],
        },
      ],
    },
    {
      title: 'Contention and failures',
      panels: [
        {
          title: 'Write conflicts per second',
          type: 'timeseries',
          unit: 'ops',
          description: 'Writes refused because the object changed since the decision (re-decided).',
          queries: [
            {
              expr: `sum by (function) (rate(${metric('olmq_write_conflicts_total', c)}[5m]))`,
              legend: '{{function}}',
            },
          ],
        },
        {
          title: 'Lease contention per second',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (function) (rate(${metric('olmq_work_lease_contended_total', c)}[5m]))`,
              legend: '{{function}}',
            },
          ],
        },
        {
          title: 'Dead letters waiting',
          type: 'timeseries',
          description: 'Work given up on and not handled yet (olmq dlq list), per function.',
          queries: [
            {
              expr: `max by (function) (${metric('olmq_dead_letters', c)})`,
              legend: '{{function}}',
            },
          ],
        },
        {
          title: 'Dead-lettered by reason, redriven by cause (1h)',
          type: 'timeseries',
          queries: [
            {
              expr: `sum by (function, reason) (increase(${metric('olmq_work_dead_lettered_total', c)}[1h]))`,
              legend: 'dead {{function}} {{reason}}',
            },
            {
              expr: `sum by (function, cause) (increase(${metric('olmq_dead_letters_redriven_total', c)}[1h]))`,
              legend: 'redriven {{function}} {{cause}}',
            },
          ],
        },
        {
          title: 'Retries and dead letters (1h)',
          type: 'timeseries',
          queries: [
            {
              expr: `sum by (function) (increase(${metric('olmq_work_retried_total', c)}[1h]))`,
              legend: 'retried {{function}}',
            },
            {
              expr: `sum by (function) (increase(${metric('olmq_work_dead_lettered_total', c)}[1h]))`,
              legend: 'dead-lettered {{function}}',
            },
          ],
        },
      ],
    },
    {
      title: 'Watcher and API',
      panels: [
        {
          title: 'Active watcher',
          type: 'stat',
          description: 'Replicas leading each cluster (should be exactly 1).',
          queries: [
            {
              expr: `sum by (cluster) (${metric('olmq_watcher_leading', c)})`,
              legend: '{{cluster}}',
              instant: true,
            },
          ],
        },
        {
          title: 'Changes mirrored per second',
          type: 'timeseries',
          unit: 'ops',
          stacked: true,
          queries: [
            {
              expr: `sum by (kind) (rate(${metric('olmq_watcher_changes_published_total', c)}[5m]))`,
              legend: '{{kind}}',
            },
          ],
        },
        {
          title: 'JetStream stream usage',
          type: 'timeseries',
          unit: 'percentunit',
          description: "Bytes stored over each stream's byte limit (OlmqStreamNearLimit at 80%).",
          queries: [
            {
              expr: `max by (stream) (${metric('olmq_jetstream_stream_usage_ratio')})`,
              legend: '{{stream}}',
            },
          ],
        },
        {
          title: 'Watches resumed and resyncs (1h)',
          type: 'timeseries',
          queries: [
            {
              expr: `sum by (event, kind) (increase(${metric('olmq_watcher_watch_events_total', c)}[1h]))`,
              legend: '{{event}} {{kind}}',
            },
          ],
        },
        {
          title: 'Lease takeovers (1h)',
          type: 'timeseries',
          queries: [
            {
              expr: `sum by (cluster) (increase(${metric('olmq_lease_takeovers_total', c)}[1h]))`,
              legend: '{{cluster}}',
            },
          ],
        },
        {
          title: 'API requests per second by verb',
          type: 'timeseries',
          unit: 'ops',
          stacked: true,
          queries: [
            {
              expr: `sum by (verb) (rate(${metric('olmq_api_requests_total', c)}[5m]))`,
              legend: '{{verb}}',
            },
          ],
        },
        {
          title: 'API errors per second by code',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (code) (rate(${metric('olmq_api_requests_total', `${c},code!~"2.."`)}[5m]))`,
              legend: '{{code}}',
            },
          ],
        },
      ],
    },
  ],
};
