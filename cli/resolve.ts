// `olmq resolve`: resolve Subscriptions against File-Based Catalog directories without a
// cluster (dry run, upgrade preview). Exit 0 resolved, 1 unsatisfiable, 2 bad input.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments, stringify } from 'yaml';
import type { z } from 'zod';
import {
  clusterServiceVersionSchema,
  ObjectValidationError,
  parseObject,
  subscriptionSchema,
  type ClusterServiceVersion,
  type Subscription,
} from '../shared/api/index.js';

// Hand-written upgrade previews give status.installedCSV without the lastUpdated the API server
// would have set; nothing else is relaxed.
const offlineSubscriptionSchema = subscriptionSchema.extend({
  status: subscriptionStatusSchema.partial({ lastUpdated: true }).optional(),
});
import { subscriptionStatusSchema } from '../shared/api/subscription.js';
import { CatalogError, buildCatalogIndex, loadCatalogDirectory } from '../shared/catalog/index.js';
import {
  installedCsvFacts,
  isCopiedCsv,
  PropertiesAnnotationError,
  resolveNamespace,
  subscriptionFacts,
  type Resolution,
  type ResolverCatalog,
} from '../shared/resolver/index.js';
import {
  CatalogImageError,
  catalogObjectsFromImage,
  looksLikeImage,
  type ImageAccessFlags,
} from './catalog-image.js';
import { exitCodes, type CatalogSpec, type CommandConfig } from './commands.js';

/** Input that cannot be used; the message names the file (and document, field). Exit code 2. */
export class ResolveInputError extends Error {
  override readonly name = 'ResolveInputError';
}

/** The `-o json` contract of `olmq resolve`. */
export interface ResolveOutput {
  status: 'resolved' | 'unsatisfiable';
  bundles: {
    package: string;
    name: string;
    version: string;
    catalog: string;
    subscription: string | null;
    action: 'install' | 'upgrade' | 'keep';
    replaces: string | null;
  }[];
  problems: { subscription: string | null; message: string }[];
}

async function readDocuments(file: string, what: string): Promise<{ doc: unknown; n: number }[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ResolveInputError(
      `${file}: cannot read the ${what} file${code === 'ENOENT' ? ': no such file' : `: ${(error as Error).message}`}`,
    );
  }
  const out: { doc: unknown; n: number }[] = [];
  let n = 0;
  for (const document of parseAllDocuments(text)) {
    n++;
    if (document.errors.length > 0) {
      const first = document.errors[0];
      const line = first?.linePos?.[0].line;
      throw new ResolveInputError(
        `${file}: document ${n}${line === undefined ? '' : ` (line ${line})`}: not valid YAML or JSON: ${first?.message.split('\n')[0] ?? ''}`,
      );
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    // A `kind: List` (kubectl get -o yaml) holds its objects in items.
    const items = (value as { kind?: unknown; items?: unknown }).items;
    if ((value as { kind?: unknown }).kind === 'List' && Array.isArray(items)) {
      for (const item of items) out.push({ doc: item, n });
    } else {
      out.push({ doc: value, n });
    }
  }
  return out;
}

function parseAll<S extends z.ZodType>(
  docs: readonly { doc: unknown; n: number }[],
  file: string,
  kind: string,
  schema: S,
): z.output<S>[] {
  return docs.map(({ doc, n }) => {
    const name = (doc as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    const what = `${kind} ${typeof name === 'string' ? `"${name}"` : '(unnamed)'}`;
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
      throw new ResolveInputError(`${file}: document ${n}: expected a ${kind} object`);
    }
    const found = (doc as { kind?: unknown }).kind;
    if (found !== undefined && found !== kind) {
      throw new ResolveInputError(
        `${file}: document ${n}: kind: expected ${kind}, found ${JSON.stringify(found)}`,
      );
    }
    try {
      return parseObject(schema, doc, what);
    } catch (error) {
      if (error instanceof ObjectValidationError) {
        throw new ResolveInputError(`${file}: document ${n}: ${error.message}`);
      }
      throw error;
    }
  });
}

async function loadCatalogs(
  specs: readonly CatalogSpec[],
  subs: readonly Subscription[],
  namespace: string,
  access: ImageAccessFlags,
): Promise<ResolverCatalog[]> {
  const seen = new Set<string>();
  const out: ResolverCatalog[] = [];
  for (const spec of specs) {
    let ns = spec.namespace;
    if (ns === null) {
      const used = new Set(
        subs.filter((s) => s.spec.source === spec.name).map((s) => s.spec.sourceNamespace),
      );
      ns = used.size === 1 ? ([...used][0] as string) : namespace;
    }
    const key = `${ns}/${spec.name}`;
    if (seen.has(key)) throw new ResolveInputError(`--catalog: catalog ${key} is given twice`);
    seen.add(key);
    let index;
    try {
      index = looksLikeImage(spec.dir)
        ? buildCatalogIndex(
            await catalogObjectsFromImage(spec.dir, `--catalog ${spec.name}=${spec.dir}`, access),
          ).index
        : (await loadCatalogDirectory(spec.dir)).index;
    } catch (error) {
      if (error instanceof CatalogImageError) throw new ResolveInputError(error.message);
      if (error instanceof CatalogError || (error as NodeJS.ErrnoException).code !== undefined) {
        throw new ResolveInputError(
          `--catalog ${spec.name}=${spec.dir}: ${(error as Error).message}`,
        );
      }
      throw error;
    }
    if (index.packages.length === 0) {
      throw new ResolveInputError(
        `--catalog ${spec.name}=${spec.dir}: no File-Based Catalog packages found in the ${looksLikeImage(spec.dir) ? 'image' : 'directory'}`,
      );
    }
    out.push({ name: spec.name, namespace: ns, priority: spec.priority, index });
  }
  return out;
}

/** The `-o json` object of a resolution. */
export function resolveOutput(resolution: Resolution): ResolveOutput {
  return {
    status: resolution.status,
    bundles: resolution.bundles.map((b) => ({
      package: b.package,
      name: b.name,
      version: b.version,
      catalog: b.catalog.name,
      subscription: b.subscription,
      action: b.action,
      replaces: b.replaces,
    })),
    problems: resolution.problems.map((p) => ({
      subscription: p.subscription,
      message: p.message,
    })),
  };
}

function text(resolution: Resolution): string {
  const lines: string[] = [];
  if (resolution.status === 'resolved') lines.push('Resolved.');
  else lines.push('Unsatisfiable: some Subscriptions cannot be resolved (see problems below).');
  if (resolution.bundles.length > 0) {
    lines.push('', 'Bundles:');
    for (const b of resolution.bundles) {
      const who = b.subscription === null ? 'dependency' : `subscription ${b.subscription}`;
      const what =
        b.action === 'keep'
          ? 'keep'
          : b.action === 'upgrade'
            ? `upgrade from ${b.replaces ?? ''}`
            : 'install';
      const where = b.channel === null ? b.catalog.name : `${b.catalog.name}, channel ${b.channel}`;
      lines.push(`  ${b.name} (${b.package} ${b.version}) — ${what} — ${who} — ${where}`);
    }
  }
  if (resolution.problems.length > 0) {
    lines.push('', 'Problems:');
    for (const p of resolution.problems) {
      lines.push(
        `  ${p.subscription === null ? 'namespace' : `subscription ${p.subscription}`}: ${p.message}`,
      );
    }
  }
  if (resolution.warnings.length > 0) {
    lines.push('', 'Warnings:');
    for (const w of resolution.warnings) lines.push(`  ${w.message}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Runs `olmq resolve`; returns the exit code. */
export async function runResolve(config: CommandConfig<'resolve'>): Promise<number> {
  try {
    if (config.catalog.length === 0) {
      throw new ResolveInputError('--catalog: at least one catalog is required (NAME=DIR|IMAGE)');
    }
    const subs = parseAll(
      await readDocuments(config.subscriptions, 'subscriptions'),
      config.subscriptions,
      'Subscription',
      offlineSubscriptionSchema,
    ) as Subscription[];
    if (subs.length === 0) {
      throw new ResolveInputError(`${config.subscriptions}: no Subscription found`);
    }
    const namespaces = new Set(subs.map((s) => s.metadata.namespace ?? 'default'));
    if (namespaces.size > 1) {
      throw new ResolveInputError(
        `${config.subscriptions}: metadata.namespace: Subscriptions of several namespaces (${[...namespaces].join(', ')}); resolution is per namespace`,
      );
    }
    const namespace = [...namespaces][0] ?? 'default';
    const names = new Set<string>();
    for (const s of subs) {
      const name = s.metadata.name ?? '';
      if (name === '')
        throw new ResolveInputError(
          `${config.subscriptions}: metadata.name: a Subscription has no name`,
        );
      if (names.has(name))
        throw new ResolveInputError(
          `${config.subscriptions}: metadata.name: Subscription "${name}" is given twice`,
        );
      names.add(name);
    }
    let csvs: ClusterServiceVersion[] = [];
    if (config.installed !== undefined) {
      csvs = parseAll(
        await readDocuments(config.installed, 'installed'),
        config.installed,
        'ClusterServiceVersion',
        clusterServiceVersionSchema,
      );
    }
    const installed = csvs
      .filter((c) => !isCopiedCsv(c))
      .map((c) => {
        try {
          return installedCsvFacts(c);
        } catch (error) {
          if (error instanceof PropertiesAnnotationError) {
            throw new ResolveInputError(`${config.installed ?? ''}: ${error.message}`);
          }
          throw error;
        }
      });
    const catalogs = await loadCatalogs(config.catalog, subs, namespace, config);
    const resolution = resolveNamespace({
      namespace,
      subscriptions: subs.map(subscriptionFacts),
      installed,
      operatorGroups: null,
      catalogs,
    });
    const out =
      config.output === 'json'
        ? `${JSON.stringify(resolveOutput(resolution), null, 2)}\n`
        : config.output === 'yaml'
          ? stringify(resolveOutput(resolution))
          : text(resolution);
    process.stdout.write(out);
    return resolution.status === 'resolved' ? exitCodes.ok : exitCodes.failed;
  } catch (error) {
    if (error instanceof ResolveInputError) {
      process.stderr.write(`olmq resolve: ${error.message}\n`);
      return exitCodes.usage;
    }
    throw error;
  }
}
