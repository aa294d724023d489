// The fleet overview: per cluster, what is installed and what is wrong — Subscriptions and how
// many are behind their channel head, CSV phases, pending and failed InstallPlans, catalogs.
import { clusterSelector as c, metric, series } from '../promql.js';
import { labelValues, type DashboardSpec } from './grafana.js';

export const fleetDashboard: DashboardSpec = {
  uid: 'olmq-fleet',
  title: 'olmq / Fleet overview',
  description:
    'Operators across every cluster olmq serves: installs, upgrades, failures, catalogs.',
  variables: [{ name: 'cluster', label: 'Cluster', query: labelValues('csv_count', 'cluster') }],
  rows: [
    {
      title: 'Per cluster',
      panels: [
        {
          title: 'Clusters',
          type: 'table',
          width: 24,
          description:
            'One row per cluster: Subscriptions, those behind their channel head (UpgradePending, UpgradeAvailable, UpgradeFailed), succeeded and abnormal CSVs, InstallPlans waiting for approval or failed, catalogs not READY.',
          queries: [
            {
              expr: `sum by (cluster) (${metric('subscription_count', c)})`,
              legend: 'Subscriptions',
            },
            {
              expr: `sum by (cluster) (${metric('olmq_subscriptions', `${c},state=~"UpgradePending|UpgradeAvailable|UpgradeFailed"`)})`,
              legend: 'behind channel head',
            },
            { expr: `sum by (cluster) (${metric('csv_succeeded', c)})`, legend: 'CSVs Succeeded' },
            { expr: `count by (cluster) (${metric('csv_abnormal', c)})`, legend: 'CSVs abnormal' },
            {
              expr: `sum by (cluster) (${metric('olmq_install_plans', `${c},phase="RequiresApproval"`)})`,
              legend: 'plans awaiting approval',
            },
            {
              expr: `sum by (cluster) (${metric('olmq_install_plans', `${c},phase="Failed"`)})`,
              legend: 'plans Failed',
            },
            {
              expr: `count by (cluster) (${metric('catalogsource_ready', c)} == 0)`,
              legend: 'catalogs not READY',
            },
          ],
        },
      ],
    },
    {
      title: 'Operators',
      panels: [
        {
          title: 'Subscriptions by state',
          type: 'timeseries',
          stacked: true,
          queries: [
            {
              expr: `sum by (cluster, state) (${metric('olmq_subscriptions', c)})`,
              legend: '{{cluster}} {{state}}',
            },
          ],
        },
        {
          title: 'Abnormal CSVs by phase',
          type: 'timeseries',
          stacked: true,
          queries: [
            {
              expr: `count by (cluster, phase) (${metric('csv_abnormal', c)})`,
              legend: '{{cluster}} {{phase}}',
            },
          ],
        },
        {
          title: 'InstallPlans by phase',
          type: 'timeseries',
          stacked: true,
          queries: [
            {
              expr: `sum by (cluster, phase) (${metric('olmq_install_plans', c)})`,
              legend: '{{cluster}} {{phase}}',
            },
          ],
        },
        {
          title: 'Failing and stuck CSVs',
          type: 'table',
          width: 24,
          description: 'What CsvAbnormalFailedOver2Min and CsvAbnormalOver30Min alert on.',
          queries: [{ expr: metric('csv_abnormal', c) }],
        },
        {
          title: 'CSV upgrades',
          type: 'timeseries',
          queries: [
            {
              expr: `sum by (cluster) (increase(${metric('csv_upgrade_count', c)}[1h]))`,
              legend: '{{cluster}}',
            },
          ],
        },
        {
          title: 'Resolutions failing',
          type: 'timeseries',
          unit: 'ops',
          queries: [
            {
              expr: `sum by (cluster) (rate(${series('olm_resolution_duration_seconds', 'count', `${c},outcome="failed"`)}[5m]))`,
              legend: '{{cluster}}',
            },
          ],
        },
        {
          title: 'Steps applied with warnings',
          type: 'timeseries',
          queries: [
            {
              expr: `sum by (cluster) (increase(${metric('installplan_warnings_total', c)}[1h]))`,
              legend: '{{cluster}}',
            },
          ],
        },
      ],
    },
    {
      title: 'Catalogs',
      panels: [
        {
          title: 'CatalogSources',
          type: 'table',
          width: 16,
          description: 'READY (1) or not (0), with the size of the index each serves.',
          queries: [
            { expr: metric('catalogsource_ready', c), legend: 'ready' },
            { expr: metric('olmq_catalog_index_packages', c), legend: 'packages' },
            { expr: metric('olmq_catalog_index_bundles', c), legend: 'bundles' },
          ],
        },
        {
          title: 'Catalog warnings',
          type: 'timeseries',
          queries: [
            {
              expr: `sum by (cluster, code) (increase(${metric('olmq_catalog_warnings_total', c)}[1h]))`,
              legend: '{{cluster}} {{code}}',
            },
          ],
        },
      ],
    },
  ],
};
