// The alerts: upstream OLM's three, with their names, expressions and severities (upstream's
// deploy/chart/templates/0000_90_olm_01-prometheus-rule.yaml), and olmq's own. Every alert
// links its runbook section in docs/monitoring.md (a test checks each one exists).
import { metric, series } from './promql.js';

/** One alerting rule, as a Prometheus rule file holds it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: { readonly severity: 'warning' | 'critical' };
  readonly annotations: { readonly summary: string; readonly description: string };
}

/** A named group of rules. */
export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** Where the runbooks are published. */
export const runbookBase = 'https://github.com/olmq/olmq/blob/main/docs/monitoring.md';

/** The runbook anchor of an alert: its section heading in docs/monitoring.md. */
export const runbookAnchor = (alert: string): string => alert.toLowerCase();

const upstream: readonly RuleGroup[] = [
  {
    name: 'olm.csv_abnormal.rules',
    rules: [
      {
        alert: 'CsvAbnormalFailedOver2Min',
        expr: `last_over_time(${metric('csv_abnormal', 'phase="Failed"')}[5m])`,
        for: '2m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'CSV failed for over 2 minutes',
          description:
            'Failed to install Operator {{ $labels.name }} version {{ $labels.version }}. Reason-{{ $labels.reason }}',
        },
      },
      {
        alert: 'CsvAbnormalOver30Min',
        expr: `last_over_time(${metric('csv_abnormal', 'phase=~"(Replacing|Pending|Deleting|Unknown)"')}[5m])`,
        for: '30m',
        labels: { severity: 'warning' },
        annotations: {
          summary: 'CSV abnormal for over 30 minutes',
          description:
            'Failed to install Operator {{ $labels.name }} version {{ $labels.version }}. Phase-{{ $labels.phase }} Reason-{{ $labels.reason }}',
        },
      },
    ],
  },
  {
    name: 'olm.installplan.rules',
    rules: [
      {
        alert: 'InstallPlanStepAppliedWithWarnings',
        expr: `sum by(namespace) (increase(${metric('installplan_warnings_total')}[5m])) > 0`,
        labels: { severity: 'warning' },
        annotations: {
          summary: 'API returned a warning when modifying an operator',
          description:
            'The API server returned a warning during installation or upgrade of an operator. An Event with reason "AppliedWithWarnings" has been created with complete details, including a reference to the InstallPlan step that generated the warning.',
        },
      },
    ],
  },
];

const functionJobs = 'olmq-(catalog|resolve|plan|install|rbac|copy-csv|operator)';

const own: RuleGroup = {
  name: 'olmq',
  rules: [
    {
      alert: 'OlmqDeadLettersIncreasing',
      expr: `sum by (cluster, function) (increase(${metric('olmq_work_dead_lettered_total')}[15m])) > 0`,
      labels: { severity: 'warning' },
      annotations: {
        summary: 'olmq {{ $labels.function }} dead-lettered work in cluster {{ $labels.cluster }}',
        description:
          'Work items failed repeatedly and were moved to the dead-letter stream. The status of the object concerned says why; `olmq dlq list` shows them.',
      },
    },
    {
      alert: 'OlmqDeadLettersWaiting',
      // Letters are redriven on their object's next change and on a schedule: one still waiting
      // after an hour needs a person.
      expr: `max by (cluster, function) (${metric('olmq_dead_letters')}) > 0`,
      for: '1h',
      labels: { severity: 'warning' },
      annotations: {
        summary:
          '{{ $value }} dead letters of olmq {{ $labels.function }} in cluster {{ $labels.cluster }} for over an hour',
        description:
          'Redrives have not cleared them: `olmq dlq list --function {{ $labels.function }}` shows each with its error; the objects concerned say why in their status.',
      },
    },
    {
      alert: 'OlmqStreamNearLimit',
      expr: `max by (stream) (${metric('olmq_jetstream_stream_usage_ratio')}) > 0.8`,
      for: '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'JetStream stream {{ $labels.stream }} is {{ $value | humanizePercentage }} full',
        description:
          'At its byte limit a stream refuses writes or drops its oldest messages. Raise the limit or find what fills it.',
      },
    },
    {
      alert: 'OlmqBacklogGrowing',
      // Every replica reports its consumer's backlog: max, not sum.
      expr: [
        `max by (function) (${metric('olmq_consumer_backlog', 'state="pending"')}) > 500`,
        `and max by (function) (deriv(${metric('olmq_consumer_backlog', 'state="pending"')}[15m])) > 0`,
      ].join('\n'),
      for: '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary: 'olmq {{ $labels.function }} has {{ $value }} pending work items, and growing',
        description:
          'Work arrives faster than the replicas of the function finish it, for 15 minutes.',
      },
    },
    {
      alert: 'OlmqNoActiveWatcher',
      // No replica up at all, or replicas up and none leading a cluster.
      expr: [
        'absent(up{job="olmq-watcher"} == 1)',
        `or (sum by (cluster) (${metric('olmq_watcher_leading', 'job="olmq-watcher"')}) < 1)`,
      ].join('\n'),
      for: '5m',
      labels: { severity: 'critical' },
      annotations: {
        summary: 'No active olmq watcher{{ with $labels.cluster }} for cluster {{ . }}{{ end }}',
        description:
          'Without an active watcher no cluster change reaches the functions: OLM objects stop being reconciled.',
      },
    },
    {
      alert: 'OlmqWatcherLeaderFlapping',
      expr: `sum by (cluster) (increase(${metric('olmq_lease_takeovers_total')}[30m])) > 3`,
      labels: { severity: 'warning' },
      annotations: {
        summary:
          'olmq watcher leadership changed {{ $value }} times in 30m in {{ $labels.cluster }}',
        description:
          'Replicas keep taking the Lease from each other; each takeover relists every kind.',
      },
    },
    {
      alert: 'OlmqFunctionDown',
      expr: `sum by (job) (up{job=~"${functionJobs}"}) == 0`,
      for: '10m',
      labels: { severity: 'critical' },
      annotations: {
        summary: 'No replica of {{ $labels.job }} is up',
        description: 'Work for this function accumulates in its JetStream consumer until one is.',
      },
    },
    {
      alert: 'OlmqCatalogSourceUnhealthy',
      expr: `max by (cluster, namespace, name) (${metric('catalogsource_ready')}) == 0`,
      for: '10m',
      labels: { severity: 'warning' },
      annotations: {
        summary:
          'CatalogSource {{ $labels.namespace }}/{{ $labels.name }} in {{ $labels.cluster }} has not been READY for 10 minutes',
        description:
          'Subscriptions to it cannot resolve (CatalogSourcesUnhealthy). Its status.connectionState.lastObservedState and message say why.',
      },
    },
    {
      alert: 'OlmqKubeApiErrors',
      expr: [
        `sum by (cluster) (rate(${metric('olmq_api_requests_total', 'code=~"5..|429|error"')}[10m]))`,
        `/ sum by (cluster) (rate(${metric('olmq_api_requests_total')}[10m])) > 0.1`,
      ].join('\n'),
      for: '10m',
      labels: { severity: 'warning' },
      annotations: {
        summary:
          'Over 10% of olmq requests to the API server of {{ $labels.cluster }} fail (5xx, 429 or no answer)',
        description:
          'olmq retries these, so work is delayed rather than lost; a long brownout delays every install.',
      },
    },
    {
      alert: 'OlmqReconcileSlow',
      expr: [
        `histogram_quantile(0.99, sum by (cluster, function, le) (rate(${series('olmq_reconcile_duration_seconds', 'bucket')}[10m])))`,
        '> 10',
      ].join(' '),
      for: '15m',
      labels: { severity: 'warning' },
      annotations: {
        summary:
          'olmq {{ $labels.function }} reconciles take {{ $value }}s (p99) in {{ $labels.cluster }}',
        description:
          'One reconcile normally takes milliseconds; seconds mean a slow API server or catalog.',
      },
    },
  ],
};

/** Every rule group olmq ships. */
export const ruleGroups: readonly RuleGroup[] = [...upstream, own];

/** The groups with each alert's runbook link added. */
export function withRunbooks(groups: readonly RuleGroup[]): unknown[] {
  return groups.map((group) => ({
    name: group.name,
    rules: group.rules.map((rule) => ({
      ...rule,
      annotations: {
        ...rule.annotations,
        runbook_url: `${runbookBase}#${runbookAnchor(rule.alert)}`,
      },
    })),
  }));
}
