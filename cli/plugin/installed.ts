// `kubectl olmq list [-A]`: the installed operators — each Subscription with its CSV's version
// and phase — and the rows `fleet status` builds on.
import type { KubeClient } from '../../shared/kube/client.js';
import type { GlobalOptions } from './args.js';
import { noneFound, render, table, type Printer } from './output.js';
import { age } from './progress.js';
import { api, listView, type Session } from './session.js';
import { csvView, installPlanView, subscriptionView } from './types.js';

/** One installed (or installing) operator. */
export interface InstalledOperator {
  namespace: string;
  package: string;
  subscription: string;
  channel: string;
  catalog: string;
  csv: string;
  version: string;
  phase: string;
  /** The Subscription's ResolutionFailed message, or the failed plan's name; "" when none. */
  failure: string;
  age: string;
}

/** The operators of `namespace` (undefined: all namespaces), sorted by namespace and package. */
export async function installedOperators(
  client: KubeClient,
  namespace: string | undefined,
): Promise<InstalledOperator[]> {
  const [subs, csvs, plans] = await Promise.all([
    listView(client, { apiVersion: api.olm, kind: 'Subscription', namespace }, subscriptionView),
    listView(client, { apiVersion: api.olm, kind: 'ClusterServiceVersion', namespace }, csvView),
    listView(client, { apiVersion: api.olm, kind: 'InstallPlan', namespace }, installPlanView),
  ]);
  const key = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
  const csvByName = new Map(csvs.map((c) => [key(c.metadata.namespace, c.metadata.name), c]));
  const planByName = new Map(plans.map((p) => [key(p.metadata.namespace, p.metadata.name), p]));
  return subs
    .map((s) => {
      const ns = s.metadata.namespace ?? '';
      const csvName = s.status?.installedCSV ?? s.status?.currentCSV ?? '';
      const csv = csvByName.get(key(ns, csvName));
      const plan =
        s.status?.installPlanRef?.name === undefined
          ? undefined
          : planByName.get(key(ns, s.status.installPlanRef.name));
      const resolution = s.status?.conditions?.find(
        (c) => c.type === 'ResolutionFailed' && c.status === 'True',
      );
      const failure =
        resolution !== undefined
          ? `ResolutionFailed: ${resolution.message ?? ''}`
          : plan?.status?.phase === 'Failed'
            ? `InstallPlan ${plan.metadata.name} Failed`
            : csv?.status?.phase === 'Failed'
              ? `CSV Failed: ${csv.status.reason ?? ''}`
              : '';
      return {
        namespace: ns,
        package: s.spec.name,
        subscription: s.metadata.name,
        channel: s.spec.channel ?? '',
        catalog: `${s.spec.sourceNamespace ?? ''}/${s.spec.source ?? ''}`,
        csv: csv === undefined ? '' : csv.metadata.name,
        version: csv?.spec.version ?? '',
        phase:
          csv?.status?.phase ??
          (plan?.status?.phase === 'RequiresApproval' ? 'RequiresApproval' : ''),
        failure,
        age: age(s.metadata.creationTimestamp),
      };
    })
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.package.localeCompare(b.package));
}

/** `list [-A]`. */
export async function list(
  session: Session,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const namespace = global.allNamespaces ? undefined : session.namespace;
  const rows = await installedOperators(session.client, namespace);
  if (rows.length === 0 && global.output === 'table') {
    printer.progress(noneFound(namespace));
    return;
  }
  const ns = global.allNamespaces;
  printer.out(
    render(global.output, rows, () =>
      table(
        [
          ...(ns ? ['namespace'] : []),
          'package',
          'subscription',
          'installed csv',
          'version',
          'phase',
          'channel',
          'catalog',
          'age',
        ],
        rows.map((r) => [
          ...(ns ? [r.namespace] : []),
          r.package,
          r.subscription,
          r.csv,
          r.version,
          r.phase,
          r.channel,
          r.catalog,
          r.age,
        ]),
      ),
    ),
  );
}
