// `kubectl olmq fleet status [--kubeconfig FILE] [--contexts a,b]`: over the contexts of a
// kubeconfig, each package's installed version per cluster, its drift from the channel head
// (the PackageManifest's status.channels[].currentCSV) and failures. Clusters are read in
// parallel; one that cannot be reached is reported, not fatal.
import { stringFlag, type GlobalOptions, type ParsedArgs } from './args.js';
import { installedOperators } from './installed.js';
import { render, styles, table, type Printer } from './output.js';
import { headVersion, packageManifests } from './packages.js';
import { loadKubeConfig, sessionOf, useContext } from './session.js';
import type { PackageManifestView } from './types.js';

/** One operator on one cluster, as `fleet status` reports it. */
export interface FleetRow {
  cluster: string;
  namespace: string;
  package: string;
  csv: string;
  version: string;
  channel: string;
  /** The channel head's CSV and version, "" when the catalog does not say. */
  head: string;
  headVersion: string;
  /** up-to-date, behind, or unknown (no PackageManifest for the channel). */
  drift: 'up-to-date' | 'behind' | 'unknown';
  phase: string;
  failure: string;
}

/** One cluster's answer. */
export interface FleetCluster {
  cluster: string;
  error: string | null;
  operators: FleetRow[];
}

async function clusterStatus(
  kubeconfig: string | undefined,
  context: string,
  namespace: string | undefined,
): Promise<FleetCluster> {
  const kubeConfig = loadKubeConfig(kubeconfig);
  useContext(kubeConfig, context, '--contexts');
  const session = await sessionOf(kubeConfig);
  try {
    const operators = await installedOperators(session.client, namespace);
    let manifests: PackageManifestView[] = [];
    try {
      manifests = await packageManifests(session.client, undefined);
    } catch {
      // No package server: versions are still shown, drift is unknown.
    }
    const rows = operators.map((op): FleetRow => {
      const [catalogNamespace, catalog] = op.catalog.split('/');
      const pkg = manifests.find(
        (m) =>
          m.metadata.name === op.package &&
          m.status.catalogSource === catalog &&
          m.status.catalogSourceNamespace === catalogNamespace,
      );
      const channel = pkg?.status.channels.find(
        (c) => c.name === (op.channel || pkg.status.defaultChannel),
      );
      const head = channel?.currentCSV ?? '';
      return {
        cluster: context,
        namespace: op.namespace,
        package: op.package,
        csv: op.csv,
        version: op.version,
        channel: op.channel,
        head,
        headVersion: channel === undefined ? '' : headVersion(channel),
        drift: head === '' || op.csv === '' ? 'unknown' : head === op.csv ? 'up-to-date' : 'behind',
        phase: op.phase,
        failure: op.failure,
      };
    });
    return { cluster: context, error: null, operators: rows };
  } catch (error) {
    return { cluster: context, error: (error as Error).message, operators: [] };
  } finally {
    session.client.close();
  }
}

/** `fleet status`; returns 1 when a cluster could not be read. */
export async function fleetStatus(
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<number> {
  const kubeConfig = loadKubeConfig(global.kubeconfig);
  const wanted = stringFlag(args, 'contexts');
  const contexts =
    wanted === undefined
      ? kubeConfig.getContexts().map((c) => c.name)
      : wanted
          .split(',')
          .map((c) => c.trim())
          .filter((c) => c !== '');
  for (const c of contexts) useContext(kubeConfig, c, '--contexts');
  const namespace =
    global.allNamespaces || global.namespace === undefined ? undefined : global.namespace;
  const clusters = await Promise.all(
    contexts.map((c) => clusterStatus(global.kubeconfig, c, namespace)),
  );
  printer.out(render(global.output, { clusters }, () => fleetText(clusters, printer.colour)));
  return clusters.some((c) => c.error !== null) ? 1 : 0;
}

function fleetText(clusters: readonly FleetCluster[], colour: boolean): string {
  const s = styles(colour);
  const rows = clusters.flatMap((c) =>
    c.error !== null
      ? [[c.cluster, '', '', '', '', '', '', `unreachable: ${c.error}`]]
      : c.operators.map((o) => [
          o.cluster,
          o.namespace,
          o.package,
          o.version || o.csv,
          o.channel,
          o.headVersion || o.head,
          o.drift,
          o.failure || o.phase,
        ]),
  );
  // Per package, the versions across clusters at a glance.
  const packages = [...new Set(clusters.flatMap((c) => c.operators.map((o) => o.package)))].sort();
  const matrix = table(
    ['package', ...clusters.map((c) => c.cluster)],
    packages.map((p) => [
      p,
      ...clusters.map((c) => {
        const found = c.operators.filter((o) => o.package === p);
        return (
          found
            .map(
              (o) =>
                `${o.version || o.csv || '?'}${o.drift === 'behind' ? '*' : ''}${o.failure ? '!' : ''}`,
            )
            .join(',') || '-'
        );
      }),
    ]),
  );
  const text = table(
    ['cluster', 'namespace', 'package', 'version', 'channel', 'head', 'drift', 'status'],
    rows,
  )
    .split('\n')
    .map((l) => (/\bbehind\b/.test(l) ? s.yellow(l) : /Failed|unreachable/.test(l) ? s.red(l) : l))
    .join('\n');
  return `${text}\n${matrix}(* behind the channel head, ! failing)\n`;
}
