// A CSV's deployment install strategy: parsed, and the writes that install it (the strategy's
// Deployments, with the Subscription's config and serving certificates, and the webhook and
// APIService objects). Pure.
import type {
  StrategyDeploymentPermissions,
  StrategyDeploymentSpec,
} from '../../../shared/api/clusterserviceversion.js';
import type { OperatorGroup } from '../../../shared/api/index.js';
import type { SubscriptionConfig } from '../../../shared/api/subscription.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import type { Served } from '../../../shared/kube/served.js';
import type { Csv } from '../csv-status.js';
import { mergedAnnotations, refOf } from '../kube-writes.js';
import { deploymentFor } from './deployments.js';
import { certifiedWrites } from './webhook-writes.js';
import {
  certificateSecretName,
  certifiedDeployments,
  existingKey,
  serviceNameOf,
  withCertificate,
} from './webhooks.js';
import type { CsvNamespaceSnapshot } from './types.js';

/** The deployment install strategy, parsed. */
export interface Strategy {
  deployments: StrategyDeploymentSpec[];
  permissions: StrategyDeploymentPermissions[];
  clusterPermissions: StrategyDeploymentPermissions[];
}

/**
 * The deployment install strategy, or the reason it is invalid. Upstream decodes the strategy
 * only here, so its content is checked here too (the schema admits any strategy name).
 */
export function strategyOf(csv: Csv): Strategy | { invalid: string } {
  const install = csv.spec?.install;
  if (install === undefined) return { invalid: 'missing install strategy' };
  if (install.strategy !== 'deployment') {
    return { invalid: `unsupported InstallStrategy type: ${String(install.strategy)}` };
  }
  const spec = install.spec;
  if (spec === undefined || !Array.isArray(spec.deployments)) {
    return { invalid: 'install strategy has no deployments' };
  }
  for (const [i, d] of spec.deployments.entries()) {
    if (typeof d.name !== 'string' || d.name === '')
      return { invalid: `deployments[${i}] has no name` };
    if (typeof d.spec !== 'object' || d.spec === null)
      return { invalid: `deployment ${d.name} has no spec` };
  }
  return {
    deployments: spec.deployments,
    permissions: Array.isArray(spec.permissions) ? spec.permissions : [],
    clusterPermissions: Array.isArray(spec.clusterPermissions) ? spec.clusterPermissions : [],
  };
}

/** The Subscription config of the subscription that installed `csv`. */
function configFor(
  csv: Csv,
  subscriptions: CsvNamespaceSnapshot['subscriptions'],
): SubscriptionConfig | undefined {
  return subscriptions.find((s) => s.status?.installedCSV === csv.metadata.name)?.spec?.config;
}

/** The deployments `csv`'s strategy asks for. */
export function intendedDeployments(
  csv: Csv,
  strategy: Strategy,
  s: CsvNamespaceSnapshot,
): KubeObject[] {
  const config = configFor(csv, s.subscriptions);
  const certified = certifiedDeployments(csv);
  const certificates = s.certificates.get(csv.metadata.name ?? '');
  return strategy.deployments.map((entry) => {
    const cert = certificates?.get(entry.name);
    if (!certified.has(entry.name) || cert === undefined)
      return deploymentFor({ csv, entry, config });
    const spec = withCertificate(
      entry.spec,
      cert.caHash,
      certificateSecretName(serviceNameOf(entry.name)),
    );
    return deploymentFor({ csv, entry: { ...entry, spec }, config });
  });
}

/** The webhook/APIService writes of `csv` (empty when it has none). */
function certifiedWritesOf(
  csv: Csv,
  strategy: Strategy,
  s: CsvNamespaceSnapshot,
  group: Served<OperatorGroup>,
  targets: readonly string[],
): Write[] {
  if (certifiedDeployments(csv).size === 0) return [];
  const existing = new Map(s.existing);
  for (const [name, crd] of s.crds) {
    existing.set(existingKey('CustomResourceDefinition', undefined, name), crd);
  }
  return certifiedWrites({
    csv,
    namespace: s.namespace,
    deploymentSpecs: new Map(strategy.deployments.map((d) => [d.name, d.spec])),
    certificates: s.certificates.get(csv.metadata.name ?? '') ?? new Map(),
    existing,
    webhookConfigurations: s.webhookConfigurations.filter(
      (c) => c.metadata.labels?.['olm.owner'] === csv.metadata.name,
    ),
    operatorGroup: group,
    targets,
  });
}

/** Whether `object` has an owner reference to `csv`. */
function ownedBy(object: KubeObject, csv: Csv): boolean {
  return (object.metadata.ownerReferences ?? []).some(
    (r) => r.kind === 'ClusterServiceVersion' && r.uid === csv.metadata.uid,
  );
}

/**
 * Create or update one deployment: our content wins; foreign labels/annotations stay (e.g. a
 * failure annotation someone put there), and the owner reference moves to this CSV.
 */
export function deploymentWrite(intended: KubeObject, existing: KubeObject | undefined): Write {
  if (existing === undefined) return { op: 'create', object: intended };
  return {
    op: 'update',
    object: {
      ...existing,
      metadata: {
        ...existing.metadata,
        labels: { ...existing.metadata.labels, ...intended.metadata.labels },
        ...mergedAnnotations(existing, intended),
        ownerReferences: intended.metadata.ownerReferences ?? [],
      },
      spec: intended['spec'],
    },
  };
}

/**
 * The writes that install `csv`'s strategy: its webhook/APIService objects, its Deployments
 * (created or updated), and the deletion of Deployments it owned that the strategy no longer
 * names (upgrades).
 */
export function installWrites(
  csv: Csv,
  strategy: Strategy,
  s: CsvNamespaceSnapshot,
  group: Served<OperatorGroup>,
  targets: readonly string[],
): Write[] {
  const intended = intendedDeployments(csv, strategy, s);
  const writes: Write[] = certifiedWritesOf(csv, strategy, s, group, targets);
  for (const d of intended) {
    writes.push(
      deploymentWrite(
        d,
        s.deployments.find((x) => x.metadata.name === d.metadata.name),
      ),
    );
  }
  for (const d of s.deployments) {
    if (ownedBy(d, csv) && !intended.some((i) => i.metadata.name === d.metadata.name)) {
      writes.push({ op: 'delete', ref: refOf(d) });
    }
  }
  return writes;
}
