// Scoped installs: an OperatorGroup with spec.serviceAccountName makes OLM write an operator's
// objects (all but CRDs and APIServices) as that service account, so the operator gets no more
// than the cluster admin granted it.
import type { ServiceAccount } from '../../shared/api/core.js';
import type { OperatorGroup } from '../../shared/api/index.js';
import type { MirrorSource } from '../../shared/bus/mirror-read.js';
import type { KubeClient } from '../../shared/kube/client.js';
import type { Served } from '../../shared/kube/served.js';
import { mirroredOrApi } from '../../shared/kube/mirrored-or-api.js';

/** The service account an install in `namespace` acts as; undefined when unscoped. */
export type InstallScope = { serviceAccount: string } | { error: string } | undefined;

/**
 * Reads the namespace's OperatorGroup and, if it names a service account, checks it exists;
 * from `listed` when the caller has listed both kinds in the namespace already.
 */
export async function operatorGroupScope(
  client: KubeClient,
  namespace: string,
  listed?: {
    groups: readonly Served<OperatorGroup>[];
    serviceAccounts: readonly Served<ServiceAccount>[];
  },
): Promise<InstallScope> {
  const groups =
    listed?.groups ??
    (
      await client.list<Served<OperatorGroup>>({
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        namespace,
      })
    ).items;
  if (groups.length === 0)
    return { error: 'no operator group found that is managing this namespace' };
  if (groups.length > 1) {
    return {
      error: `more than one operator group(s) are managing this namespace count=${groups.length}`,
    };
  }
  const group = groups[0];
  const name = group?.spec?.serviceAccountName;
  if (name === undefined || name === '') return undefined;
  const account =
    listed === undefined
      ? await client.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name })
      : listed.serviceAccounts.find((a) => a.metadata.name === name);
  if (account === undefined) {
    return {
      error: `please make sure the service account exists. sa=${name} operatorgroup=${namespace}/${group?.metadata.name ?? ''}`,
    };
  }
  return { serviceAccount: name };
}

/**
 * The install scope of `namespace` from the watcher's mirror: its OperatorGroups `groups` as the
 * mirror lists them (a change of one triggers its readers, so the mirror has it), and the service
 * account, which the mirror holds only when olm.managed, from the API when the mirror lacks it.
 */
export async function mirroredScope(
  mirror: MirrorSource,
  client: KubeClient,
  cluster: string,
  namespace: string,
  groups: readonly Served<OperatorGroup>[],
): Promise<InstallScope> {
  const name = groups.length === 1 ? groups[0]?.spec?.serviceAccountName : undefined;
  const account =
    name === undefined || name === ''
      ? undefined
      : await mirroredOrApi<Served<ServiceAccount>>(mirror, client, cluster, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          namespace,
          name,
        });
  return operatorGroupScope(client, namespace, {
    groups,
    serviceAccounts: account === undefined ? [] : [account],
  });
}

/** The user name Kubernetes gives a service account. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** Impersonating clients, one per (cluster, service account), reused across reconciles. */
export class ScopedClients {
  private readonly clients = new Map<string, KubeClient>();

  /** `client` acting as service account `namespace/name`. */
  clientFor(client: KubeClient, namespace: string, name: string): KubeClient {
    const key = `${client.cluster}\u0000${namespace}\u0000${name}`;
    let scoped = this.clients.get(key);
    if (scoped === undefined) {
      scoped = client.impersonating(serviceAccountUser(namespace, name));
      this.clients.set(key, scoped);
    }
    return scoped;
  }

  /** Closes every impersonating client's connections. */
  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
