// `kubectl olmq catalog add|list|remove`: CatalogSources, as `kubectl operator catalog` manages
// them. An ADDRESS (host:port) makes a gRPC source at that address; anything else is an image.
import type { ParsedArgs } from './args.js';
import { booleanFlag, durationFlag, operands, stringFlag, type GlobalOptions } from './args.js';
import { age, pollUntil } from './progress.js';
import { noneFound, render, table, type Printer } from './output.js';
import { api, listView, mustGet, type Session } from './session.js';
import { catalogSourceView, NotFoundError, UsageError, type CatalogSourceView } from './types.js';

const catalogRef = (namespace: string | undefined, name?: string) => ({
  apiVersion: api.olm,
  kind: 'CatalogSource',
  namespace,
  name,
});

/** host:port (or [v6]:port) with no path: a registry address rather than an image reference. */
export function isRegistryAddress(value: string): boolean {
  return /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(value);
}

/** The source's connection state, as `kubectl get catsrc` shows it. */
export function catalogState(source: CatalogSourceView): string {
  return source.status?.connectionState?.lastObservedState ?? '';
}

/** `catalog add NAME ADDRESS_OR_IMAGE`. */
export async function catalogAdd(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const [name, target] = operands(args, 2, ['NAME', 'ADDRESS_OR_IMAGE']) as [string, string];
  const where = isRegistryAddress(target) ? { address: target } : { image: target };
  const displayName = stringFlag(args, 'display-name');
  const publisher = stringFlag(args, 'publisher');
  const created = await session.client.create({
    ...catalogRef(session.namespace),
    metadata: { name, namespace: session.namespace },
    spec: {
      sourceType: 'grpc',
      ...where,
      ...(displayName === undefined ? {} : { displayName }),
      ...(publisher === undefined ? {} : { publisher }),
    },
  });
  if (booleanFlag(args, 'wait')) {
    const timeoutMs = durationFlag(args, 'timeout', 120_000);
    await pollUntil(printer, `catalogsource "${name}" to be READY`, timeoutMs, async () => {
      const source = await mustGet(
        session.client,
        { ...catalogRef(session.namespace), name },
        catalogSourceView,
        'catalogsources.operators.coreos.com',
      );
      const state = catalogState(source);
      return { done: state === 'READY', status: state || 'waiting for the catalog function' };
    });
  }
  printer.out(
    render(global.output, created, () => `catalogsource.operators.coreos.com/${name} created\n`),
  );
}

/** `catalog list [-A]`. */
export async function catalogList(
  session: Session,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const namespace = global.allNamespaces ? undefined : session.namespace;
  const sources = await listView(session.client, catalogRef(namespace), catalogSourceView);
  const rows = sources.map((s) => ({
    name: s.metadata.name,
    namespace: s.metadata.namespace ?? '',
    displayName: s.spec.displayName ?? '',
    type: s.spec.sourceType ?? '',
    source: s.spec.address ?? s.spec.image ?? '',
    publisher: s.spec.publisher ?? '',
    state: catalogState(s),
    age: age(s.metadata.creationTimestamp),
  }));
  if (rows.length === 0 && global.output === 'table') {
    printer.progress(noneFound(namespace));
    return;
  }
  printer.out(
    render(global.output, rows, () =>
      table(
        [
          ...(global.allNamespaces ? ['namespace'] : []),
          'name',
          'display',
          'type',
          'address/image',
          'publisher',
          'state',
          'age',
        ],
        rows.map((r) => [
          ...(global.allNamespaces ? [r.namespace] : []),
          r.name,
          r.displayName,
          r.type,
          r.source,
          r.publisher,
          r.state,
          r.age,
        ]),
      ),
    ),
  );
}

/** `catalog remove NAME`. */
export async function catalogRemove(
  session: Session,
  args: ParsedArgs,
  printer: Printer,
): Promise<void> {
  const [name] = operands(args, 2, ['NAME']) as [string];
  if (name === '') throw new UsageError('NAME must not be empty');
  const deleted = await session.client.delete(catalogRef(session.namespace, name));
  if (!deleted)
    throw new NotFoundError(
      `catalogsources.operators.coreos.com "${name}" not found in namespace "${session.namespace}"`,
    );
  printer.out(`catalogsource.operators.coreos.com "${name}" deleted\n`);
}
