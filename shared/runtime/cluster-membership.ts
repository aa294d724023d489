// The clusters a process serves, as they change: a pool's members join and leave while it runs
// (a kubeconfig file added to or removed from a watched directory). Function hosts follow it,
// opening a joining cluster's consumers and stopping a leaving one's; reconciles take the
// member's client when they start, so a re-created client serves the next reconcile.
import type { KubeClient } from '../kube/client.js';

/** A cluster joined (or its client was re-created), or left. */
export interface MembershipChange {
  kind: 'joined' | 'left';
  cluster: string;
}

/** The clusters served, each with its API client; listeners hear every join and leave. */
export class ClusterMembership {
  private readonly members = new Map<string, KubeClient>();
  private readonly listeners = new Set<(change: MembershipChange) => void>();

  /** Starts with `clients` as members (a fixed set, or the first of a watched one). */
  constructor(clients: ReadonlyMap<string, KubeClient> = new Map()) {
    for (const [cluster, client] of clients) this.members.set(cluster, client);
  }

  /** The live member map (the same object throughout: it changes as clusters join and leave). */
  get clients(): ReadonlyMap<string, KubeClient> {
    return this.members;
  }

  /** The served cluster ids. */
  get clusters(): string[] {
    return [...this.members.keys()];
  }

  /**
   * Makes `cluster` a member with `client`, and returns the client it replaces (the caller closes
   * it once reconciles holding it are done). Listeners hear a join only for a new member: a
   * replaced client changes no consumer.
   */
  set(cluster: string, client: KubeClient): KubeClient | undefined {
    const replaced = this.members.get(cluster);
    this.members.set(cluster, client);
    if (replaced === undefined) this.tell({ kind: 'joined', cluster });
    return replaced;
  }

  /** Removes `cluster` and returns its client (undefined when it was not a member). */
  remove(cluster: string): KubeClient | undefined {
    const client = this.members.get(cluster);
    if (client === undefined) return undefined;
    this.members.delete(cluster);
    this.tell({ kind: 'left', cluster });
    return client;
  }

  /** Calls `listener` on every join and leave from now on; returns the unsubscribe. */
  onChange(listener: (change: MembershipChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private tell(change: MembershipChange): void {
    for (const listener of this.listeners) listener(change);
  }
}

/**
 * The membership a host follows: the one given, or a fixed map's (its clusters for good);
 * undefined for an empty map, which serves every cluster through one consumer.
 */
export function membershipOf(
  clusters: ReadonlyMap<string, KubeClient> | ClusterMembership,
): ClusterMembership | undefined {
  if (clusters instanceof ClusterMembership) return clusters;
  return clusters.size > 0 ? new ClusterMembership(clusters) : undefined;
}
