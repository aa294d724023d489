// Waiting for an in-process system to go quiet, so a measurement starts from a settled state
// (for example a namespace whose OperatorGroup every function has already reconciled).

/**
 * Resolves once this process (devcluster, watcher and functions alike) has been idle for two
 * 50 ms windows in a row (under 5% of a core), or after 5 s.
 */
export async function settled(): Promise<void> {
  const deadline = performance.now() + 5_000;
  let quiet = 0;
  while (quiet < 2 && performance.now() < deadline) {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const used = process.cpuUsage(before);
    quiet = (used.user + used.system) / 1000 < 2.5 ? quiet + 1 : 0;
  }
}
