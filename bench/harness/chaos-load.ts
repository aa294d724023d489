// The load every chaos bench runs its faults against: two operators (etcd and hawtio, from the
// repository's community catalog) subscribed in each of N namespaces.
import type { KubeClient } from '../../shared/kube/client.js';
import { namespaceWithOperatorGroup } from '../../test/harness/install.js';

/** The packages each namespace subscribes to, and the CSV each installs. */
export const chaosPackages = [
  { name: 'etcd', channel: 'singlenamespace-alpha', csv: 'etcdoperator.v0.9.4' },
  { name: 'hawtio-operator', channel: 'stable-v1', csv: 'hawtio-operator.v1.2.0' },
] as const;

/** `chaos-0` … `chaos-<count-1>`. */
export const chaosNamespaces = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `chaos-${i}`);

/** The `namespace/csv` of every CSV the load installs. */
export const chaosExpectedCsvs = (namespaces: readonly string[]): string[] =>
  namespaces.flatMap((ns) => chaosPackages.map((p) => `${ns}/${p.csv}`));

/** A Subscription to `pkg` from the community catalog in `namespace`. */
export function chaosSubscription(namespace: string, pkg: (typeof chaosPackages)[number]) {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: pkg.name, namespace },
    spec: { name: pkg.name, channel: pkg.channel, source: 'community', sourceNamespace: 'olm' },
  };
}

/** Creates every namespace with its OperatorGroup and Subscriptions, namespaces at once. */
export async function subscribeChaosLoad(
  client: KubeClient,
  namespaces: readonly string[],
): Promise<void> {
  await Promise.all(
    namespaces.map(async (namespace) => {
      await namespaceWithOperatorGroup(client, namespace);
      for (const pkg of chaosPackages) await client.create(chaosSubscription(namespace, pkg));
    }),
  );
}
