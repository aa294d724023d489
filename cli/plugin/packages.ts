// What catalogs offer, read from PackageManifests (packages.operators.coreos.com/v1, served by
// the package server): `list-available [--catalog] [PACKAGE]`, `describe PACKAGE`, and the
// lookups install and fleet share.
import type { KubeClient } from '../../shared/kube/client.js';
import { operands, stringFlag, type GlobalOptions, type ParsedArgs } from './args.js';
import { noneFound, render, table, type Printer } from './output.js';
import { api, listView, served, type Session } from './session.js';
import {
  NotFoundError,
  packageManifestView,
  UsageError,
  type PackageManifestView,
} from './types.js';

/** The PackageManifests `namespace` sees (undefined: every namespace), optionally of one catalog. */
export async function packageManifests(
  client: KubeClient,
  namespace: string | undefined,
  filter: { catalog?: string | undefined; name?: string | undefined } = {},
): Promise<PackageManifestView[]> {
  if (!(await served(client, api.packages, 'PackageManifest')))
    throw new NotFoundError(
      `the server doesn't have a resource type "packagemanifests" (${api.packages}): is the olmq package server running?`,
    );
  const selectors = filter.catalog === undefined ? undefined : `catalog=${filter.catalog}`;
  const all = await listView(
    client,
    { apiVersion: api.packages, kind: 'PackageManifest', namespace },
    packageManifestView,
    selectors,
  );
  return filter.name === undefined ? all : all.filter((p) => p.metadata.name === filter.name);
}

/** The one PackageManifest of `name` (from `catalog` if given); NotFound worded as kubectl's. */
export async function findPackage(
  client: KubeClient,
  namespace: string,
  name: string,
  catalog: string | undefined,
): Promise<PackageManifestView> {
  const found = await packageManifests(client, namespace, { catalog, name });
  const first = found[0];
  if (first === undefined)
    throw new NotFoundError(
      `package "${name}" not found${catalog === undefined ? '' : ` in catalog "${catalog}"`} (namespace "${namespace}"); see kubectl olmq list-available`,
    );
  return first;
}

/** The channel named `channel` (default: the package's default channel). */
export function channelOf(
  pkg: PackageManifestView,
  channel: string | undefined,
  flag = '--channel',
) {
  const name = channel ?? pkg.status.defaultChannel ?? pkg.status.channels[0]?.name;
  const found = pkg.status.channels.find((c) => c.name === name);
  if (found === undefined)
    throw new UsageError(
      `${flag}: package "${pkg.metadata.name}" has no channel "${name ?? ''}" (channels: ${pkg.status.channels.map((c) => c.name).join(', ')})`,
    );
  return found;
}

/** The channel head's version (from currentCSVDesc, else its entry). */
export function headVersion(channel: PackageManifestView['status']['channels'][number]): string {
  return (
    channel.currentCSVDesc?.version ??
    channel.entries?.find((e) => e.name === channel.currentCSV)?.version ??
    ''
  );
}

/** `list-available [--catalog C] [PACKAGE]`. */
export async function listAvailable(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const rest = args.positionals.slice(1);
  if (rest.length > 1) throw new UsageError(`unexpected argument "${rest[1] ?? ''}"`);
  const namespace = global.allNamespaces ? undefined : session.namespace;
  const pkgs = await packageManifests(session.client, namespace, {
    catalog: stringFlag(args, 'catalog'),
    name: rest[0],
  });
  const rows = pkgs.map((p) => {
    const channel = p.status.channels.find((c) => c.name === p.status.defaultChannel);
    return {
      name: p.metadata.name,
      catalog: p.status.catalogSource ?? '',
      catalogDisplayName: p.status.catalogSourceDisplayName ?? '',
      defaultChannel: p.status.defaultChannel ?? '',
      channels: p.status.channels.map((c) => c.name),
      latest: channel === undefined ? '' : headVersion(channel),
      provider: p.status.provider?.name ?? '',
    };
  });
  if (rows.length === 0 && global.output === 'table') {
    if (rest[0] !== undefined)
      throw new NotFoundError(`package "${rest[0]}" not found in namespace "${session.namespace}"`);
    printer.progress(noneFound(namespace));
    return;
  }
  printer.out(
    render(global.output, rows, () =>
      table(
        ['name', 'catalog', 'default channel', 'latest', 'channels', 'provider'],
        rows.map((r) => [
          r.name,
          r.catalogDisplayName || r.catalog,
          r.defaultChannel,
          r.latest,
          r.channels.join(','),
          r.provider,
        ]),
      ),
    ),
  );
}

// Descriptions run to pages of Markdown: the first lines say what the operator is.
const descriptionLines = 12;

function summary(description: string): string[] {
  const lines = description.trimEnd().split('\n');
  const shown = lines.slice(0, descriptionLines).map((l) => `  ${l}`.trimEnd());
  if (lines.length > descriptionLines)
    shown.push(`  ... (${lines.length - descriptionLines} more lines: -o yaml shows all)`);
  return shown;
}

/** `describe PACKAGE [--catalog C]`: channels, versions, description. */
export async function describePackage(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const [name] = operands(args, 1, ['PACKAGE']) as [string];
  const pkg = await findPackage(
    session.client,
    session.namespace,
    name,
    stringFlag(args, 'catalog'),
  );
  if (global.output !== 'table') {
    printer.out(render(global.output, pkg, () => ''));
    return;
  }
  const head = channelOf(pkg, undefined);
  const lines = [
    `Package:          ${name}`,
    `Catalog:          ${pkg.status.catalogSourceNamespace ?? ''}/${pkg.status.catalogSource ?? ''}${pkg.status.catalogSourceDisplayName ? ` (${pkg.status.catalogSourceDisplayName})` : ''}`,
    `Provider:         ${pkg.status.provider?.name ?? '<none>'}`,
    `Default channel:  ${pkg.status.defaultChannel ?? '<none>'}`,
    `Latest:           ${head.currentCSV ?? '<none>'} (${headVersion(head) || '<none>'})`,
    '',
    'Channels:',
    table(
      ['channel', 'head', 'version', 'versions'],
      pkg.status.channels.map((c) => [
        c.name,
        c.currentCSV ?? '',
        headVersion(c),
        (c.entries ?? []).map((e) => e.version ?? e.name).join(', '),
      ]),
    )
      .split('\n')
      .map((l) => (l === '' ? l : `  ${l}`))
      .join('\n'),
    'Description:',
    ...summary(head.currentCSVDesc?.description ?? '<none>'),
  ];
  printer.out(`${lines.join('\n')}\n`);
}
