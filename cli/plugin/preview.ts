// `kubectl olmq preview SUBSCRIPTION [--channel C]`: what an approval or a channel switch would
// install, resolved here by olmq's resolver (shared/resolver) over what the cluster has — the
// namespace's Subscriptions, CSVs and OperatorGroups from the API, and each visible catalog's
// content read from its registry over gRPC (the address in spec.address, else the registry
// Service of status.registryService), as the catalog function reads it. PackageManifests are not
// enough: they carry channel heads and entries, not the properties and dependencies resolution
// needs.
import type { z } from 'zod';
import {
  catalogSourceSchema,
  clusterServiceVersionSchema,
  operatorGroupSchema,
  parseObject,
  subscriptionSchema,
  type Subscription,
} from '../../shared/api/index.js';
import { buildCatalogIndex } from '../../shared/catalog/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { fetchRegistryCatalog } from '../../shared/registry/index.js';
import {
  failForwardEnabled,
  installedCsvFacts,
  isCopiedCsv,
  operatorGroupFacts,
  replacedByFailure,
  resolveNamespace,
  subscriptionFacts,
  visibleCatalogs,
  type Resolution,
  type ResolverCatalog,
} from '../../shared/resolver/index.js';
import { resolveOutput, type ResolveOutput } from '../resolve.js';
import { durationFlag, operands, stringFlag, type GlobalOptions, type ParsedArgs } from './args.js';
import { render, styles, table, type Printer } from './output.js';
import { api, type Session } from './session.js';
import { findSubscription } from './why.js';

/** The `-o json` contract of `preview`. */
export interface PreviewOutput extends ResolveOutput {
  subscription: string;
  namespace: string;
  channel: { from: string | null; to: string | null };
  /** Catalogs that could not be read, with why (resolution went on without them). */
  unavailableCatalogs: { catalog: string; reason: string }[];
}

async function listParsed<S extends z.ZodType>(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  schema: S,
): Promise<z.output<S>[]> {
  const list = await client.list<KubeObject>({ apiVersion, kind, namespace });
  return list.items.map((item) =>
    parseObject(
      schema,
      item,
      `${kind} ${item.metadata.namespace ?? ''}/${item.metadata.name ?? ''}`,
    ),
  );
}

/** Where a CatalogSource's registry answers, if it has one. */
export function registryAddress(source: z.output<typeof catalogSourceSchema>): string | undefined {
  if (source.spec.address !== undefined && source.spec.address !== '') return source.spec.address;
  const service = source.status?.registryService;
  if (service?.serviceName === undefined || service.port === undefined) return undefined;
  return `${service.serviceName}.${service.serviceNamespace ?? source.metadata.namespace ?? ''}.svc:${service.port}`;
}

async function readCatalogs(
  client: KubeClient,
  namespaces: readonly string[],
  timeoutMs: number,
): Promise<ResolverCatalog[]> {
  const sources = (
    await Promise.all(
      namespaces.map((ns) => listParsed(client, api.olm, 'CatalogSource', ns, catalogSourceSchema)),
    )
  ).flat();
  return Promise.all(
    sources.map(async (source): Promise<ResolverCatalog> => {
      const key = {
        name: source.metadata.name ?? '',
        namespace: source.metadata.namespace ?? '',
        priority: source.spec.priority ?? 0,
      };
      const address = registryAddress(source);
      if (address === undefined)
        return {
          ...key,
          index: null,
          unavailableReason: `no registry address (sourceType ${source.spec.sourceType}); preview reads gRPC catalogs`,
        };
      try {
        const objects = await fetchRegistryCatalog({ address, timeoutMs });
        return { ...key, index: buildCatalogIndex(objects).index };
      } catch (error) {
        return {
          ...key,
          index: null,
          unavailableReason: `registry ${address}: ${(error as Error).message}`,
        };
      }
    }),
  );
}

/** Resolves `namespace` as the resolve function would, with `target`'s channel replaced. */
export async function previewResolution(
  client: KubeClient,
  namespace: string,
  target: string,
  channel: string | undefined,
  globalNamespace: string,
  timeoutMs: number,
): Promise<{ resolution: Resolution; catalogs: ResolverCatalog[]; before: Subscription }> {
  const [subs, csvs, groups] = await Promise.all([
    listParsed(client, api.olm, 'Subscription', namespace, subscriptionSchema),
    listParsed(client, api.olm, 'ClusterServiceVersion', namespace, clusterServiceVersionSchema),
    listParsed(client, api.olmV1, 'OperatorGroup', namespace, operatorGroupSchema),
  ]);
  const before = subs.find((s) => s.metadata.name === target);
  if (before === undefined)
    throw new Error(`Subscription ${namespace}/${target} disappeared while previewing`);
  const own = csvs.filter((c) => !isCopiedCsv(c));
  const steppedOver = failForwardEnabled(groups) ? replacedByFailure(own) : new Set<string>();
  const installed = own
    .filter((c) => !steppedOver.has(c.metadata.name ?? ''))
    .map(installedCsvFacts);
  const csvNames = new Set(csvs.map((c) => c.metadata.name));
  const groupFacts = groups.map((og) => operatorGroupFacts(og, namespace));
  const excludeGlobal = groupFacts.length === 1 && groupFacts[0]?.excludeGlobalCatalogs === true;
  const catalogs = visibleCatalogs(
    await readCatalogs(client, [...new Set([namespace, globalNamespace])], timeoutMs),
    namespace,
    globalNamespace,
    excludeGlobal,
  );
  const subscriptions = subs.map((sub) => {
    const facts = subscriptionFacts(
      sub.metadata.name === target && channel !== undefined
        ? { ...sub, spec: { ...sub.spec, channel } }
        : sub,
    );
    const current = sub.status?.currentCSV;
    // Upstream's AtLatestKnown rule: a Subscription whose currentCSV exists has it installed.
    return current !== undefined && current !== '' && csvNames.has(current)
      ? { ...facts, installedCSV: current }
      : facts;
  });
  const resolution = resolveNamespace({
    namespace,
    subscriptions,
    installed,
    operatorGroups: groupFacts,
    catalogs,
  });
  return { resolution, catalogs, before };
}

/** `preview SUBSCRIPTION [--channel C]`. */
export async function preview(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<number> {
  const [name] = operands(args, 1, ['SUBSCRIPTION']) as [string];
  const sub = await findSubscription(session.client, session.namespace, name);
  const channel = stringFlag(args, 'channel');
  const globalNamespace = stringFlag(args, 'global-catalog-namespace') ?? 'olm';
  const { resolution, catalogs, before } = await previewResolution(
    session.client,
    session.namespace,
    sub.metadata.name,
    channel,
    globalNamespace,
    durationFlag(args, 'timeout', 15_000),
  );
  const out: PreviewOutput = {
    subscription: sub.metadata.name,
    namespace: session.namespace,
    channel: { from: before.spec.channel ?? null, to: channel ?? before.spec.channel ?? null },
    ...resolveOutput(resolution),
    unavailableCatalogs: catalogs
      .filter((c) => c.index === null)
      .map((c) => ({ catalog: `${c.namespace}/${c.name}`, reason: c.unavailableReason ?? '' })),
  };
  printer.out(render(global.output, out, () => previewText(out, printer.colour)));
  return out.status === 'resolved' ? 0 : 1;
}

function previewText(out: PreviewOutput, colour: boolean): string {
  const s = styles(colour);
  const switching = out.channel.from !== out.channel.to;
  const lines = [
    `Preview of Subscription ${out.namespace}/${out.subscription}${switching ? ` switching channel ${out.channel.from ?? '<default>'} -> ${out.channel.to ?? '<default>'}` : ' (approving what resolution offers now)'}:`,
    '',
  ];
  const changes = out.bundles.filter((b) => b.action !== 'keep');
  if (out.status === 'unsatisfiable') {
    lines.push(
      s.red('Unsatisfiable:'),
      ...out.problems.map((p) => `  ${p.subscription ?? 'namespace'}: ${p.message}`),
    );
  } else if (changes.length === 0) {
    lines.push('Nothing would change: every Subscription is at the newest bundle it can reach.');
  } else {
    lines.push(
      table(
        ['action', 'package', 'csv', 'version', 'replaces', 'catalog', 'subscription'],
        changes.map((b) => [
          b.action,
          b.package,
          b.name,
          b.version,
          b.replaces ?? '',
          b.catalog,
          b.subscription ?? 'dependency',
        ]),
      ).trimEnd(),
    );
  }
  for (const c of out.unavailableCatalogs)
    lines.push(s.yellow(`warning: catalog ${c.catalog} not read: ${c.reason}`));
  return `${lines.join('\n')}\n`;
}
