// The plan function's gauges, computed from the mirror when scraped: upstream's counts of
// Subscriptions and InstallPlans, and olmq's by state and phase (the fleet dashboard's
// "behind the channel head" and "pending and failed InstallPlans").
import { Gauge, type Registry } from 'prom-client';
import type { Backbone } from '../../shared/bus/backbone.js';
import { listMirrored, mirroredKeys } from '../../shared/bus/mirror-read.js';
import { decodeToken, encodeToken } from '../../shared/bus/subjects.js';

/** The clusters with mirrored objects of `kind`, and how many each has. */
async function countMirrored(backbone: Backbone, kind: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  // A key filter (cluster.kind.namespace.name), not a subject.
  for (const key of await mirroredKeys(backbone, `*.${encodeToken(kind)}.*.*`)) {
    const cluster = decodeToken(key.slice(0, key.indexOf('.')));
    counts.set(cluster, (counts.get(cluster) ?? 0) + 1);
  }
  return counts;
}

/** Objects of `kind` per cluster and value of one status field ("Unknown" when unset). */
async function countByStatus(
  backbone: Backbone,
  kind: string,
  field: 'phase' | 'state',
): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const cluster of (await countMirrored(backbone, kind)).keys()) {
    const counts = new Map<string, number>();
    const objects = await listMirrored<{ status?: Record<string, unknown> }>(backbone, {
      cluster,
      kind,
    });
    for (const object of objects) {
      const value = object.status?.[field];
      const label = typeof value === 'string' && value !== '' ? value : 'Unknown';
      counts.set(label, (counts.get(label) ?? 0) + 1);
    }
    out.set(cluster, counts);
  }
  return out;
}

/** Registers the gauges in `registry`. */
export function registerPlanMetrics(backbone: Backbone, registry: Registry): void {
  for (const [name, kind, help] of [
    ['subscription_count', 'Subscription', 'Number of Subscriptions.'],
    ['install_plan_count', 'InstallPlan', 'Number of InstallPlans.'],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames: ['cluster'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const [cluster, n] of await countMirrored(backbone, kind)) this.set({ cluster }, n);
      },
    });
  }
  for (const [name, kind, field, help] of [
    [
      'olmq_subscriptions',
      'Subscription',
      'state',
      'Subscriptions by status.state (AtLatestKnown, UpgradePending, UpgradeAvailable, UpgradeFailed, Unknown when unset).',
    ],
    [
      'olmq_install_plans',
      'InstallPlan',
      'phase',
      'InstallPlans by status.phase (RequiresApproval, Installing, Complete, Failed, ...; Unknown when unset).',
    ],
  ] as const) {
    const label = field;
    new Gauge({
      name,
      help,
      labelNames: ['cluster', label],
      registers: [registry],
      async collect() {
        this.reset();
        for (const [cluster, counts] of await countByStatus(backbone, kind, field))
          for (const [value, n] of counts) this.set({ cluster, [label]: value }, n);
      },
    });
  }
}
