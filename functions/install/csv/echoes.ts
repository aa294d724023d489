// The CSV statuses this replica wrote that need no pass when the mirror echoes them: the pass
// that wrote one found its namespace settled (deciding again on the statuses it wrote changes
// nothing, decide.ts), so the echo — the CSV at exactly the resourceVersion written — would
// start a pass that only reads. Changes of anything else the pass read have their own triggers;
// another replica's writes, or any later write of the CSV, still wake the namespace.

/** How many written versions are remembered; the oldest are forgotten first (a pass then runs). */
const limit = 10_000;

/** Written CSV versions whose echo starts no pass, per cluster, namespace, name. */
export class SettledEchoes {
  private readonly versions = new Set<string>();

  private static key(cluster: string, namespace: string, name: string, version: string): string {
    return `${cluster}\u0000${namespace}\u0000${name}\u0000${version}`;
  }

  /** Remembers that the CSV's status was written at `version` by a settled pass. */
  remember(cluster: string, namespace: string, name: string, version: string): void {
    if (this.versions.size >= limit) {
      const oldest = this.versions.values().next().value;
      if (oldest !== undefined) this.versions.delete(oldest);
    }
    this.versions.add(SettledEchoes.key(cluster, namespace, name, version));
  }

  /** Whether this is the echo of a settled write (forgotten once seen). */
  take(cluster: string, namespace: string, name: string, version: string): boolean {
    return this.versions.delete(SettledEchoes.key(cluster, namespace, name, version));
  }
}
