// A watch of PackageManifests: ADDED, MODIFIED and DELETED lines as the catalogs change, from a
// list's resourceVersion (or from now, every current package first as ADDED).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StatusError } from './answers.js';
import type { Json, JsonMap } from './manifest.js';
import { visiblePackages, type PackageQuery } from './query.js';
import { metadataOf, packageTable, tableContentType } from './table.js';
import type { PackageView } from './view.js';

/**
 * Streams the changes of the packages `filter` selects until the client goes, the watch times
 * out (timeoutSeconds, default 1800) or the server stops it through `watches`.
 */
export function servePackageWatch(
  req: IncomingMessage,
  res: ServerResponse,
  params: URLSearchParams,
  filter: PackageQuery,
  view: PackageView,
  watches: Set<() => void>,
): void {
  const table = (req.headers.accept ?? '').includes('as=Table');
  const includeObject = params.get('includeObject') ?? 'Metadata';
  res.writeHead(200, {
    'Content-Type': table ? tableContentType : 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();
  const render = (manifest: JsonMap, generation: number): Json => {
    const object: JsonMap = {
      ...manifest,
      metadata: { ...metadataOf(manifest), resourceVersion: String(generation) },
    };
    return table ? packageTable([object], String(generation), includeObject, Date.now()) : object;
  };
  // From a resourceVersion: the changes since that state (410 Expired when it is too old to
  // know); without one, every current package as ADDED first, as kube's watch does.
  const from = params.get('resourceVersion');
  const since = from === null || from === '' || from === '0' ? undefined : Number(from);
  const base =
    since === undefined ? [] : Number.isInteger(since) ? view.catalogsAt(since) : undefined;
  if (base === undefined) {
    const gone = new StatusError('Expired', `too old resource version: ${from ?? ''}`);
    res.end(`${JSON.stringify({ type: 'ERROR', object: gone.status })}\n`);
    return;
  }
  let seen = new Map(visiblePackages(base, filter).map((p) => [p.key, p.manifest]));
  const sendChanges = (generation: number): void => {
    const now = new Map(visiblePackages(view.catalogs(), filter).map((p) => [p.key, p.manifest]));
    const lines: string[] = [];
    const event = (type: string, manifest: JsonMap): string =>
      JSON.stringify({ type, object: render(manifest, generation) });
    for (const [key, manifest] of now) {
      const before = seen.get(key);
      if (before === undefined) lines.push(event('ADDED', manifest));
      else if (JSON.stringify(before) !== JSON.stringify(manifest))
        lines.push(event('MODIFIED', manifest));
    }
    for (const [key, manifest] of seen) if (!now.has(key)) lines.push(event('DELETED', manifest));
    seen = now;
    if (lines.length > 0) res.write(`${lines.join('\n')}\n`);
  };
  sendChanges(view.generation);
  const unsubscribe = view.subscribe((change) => sendChanges(change.generation));
  const timeout = Number(params.get('timeoutSeconds') ?? '1800');
  const timer = setTimeout(
    () => stop(),
    Math.max(1, Number.isFinite(timeout) ? timeout : 1800) * 1000,
  );
  const stop = (): void => {
    clearTimeout(timer);
    unsubscribe();
    watches.delete(stop);
    if (!res.writableEnded) res.end();
  };
  watches.add(stop);
  res.on('close', stop);
}
