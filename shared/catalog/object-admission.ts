// Admits parsed olm.package, olm.channel and olm.deprecations objects into draft packages: each
// object kept, or dropped with the warning that says why.
import type { z } from 'zod';
import type { DraftPackage, WarningSink } from './draft.js';
import {
  ChannelObjectSchema,
  DeprecationsObjectSchema,
  PackageObjectSchema,
} from './fbc-schema.js';
import type { CatalogObject } from './fbc-text.js';
import type { CatalogChannelEntry } from './model.js';
import { CatalogWarningCode as W } from './problems.js';

/** The first issue of a schema error, as "path: message". */
export function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return `${path}${issue.message}`;
}

/** The object's `name`, when it is a string. */
export function nameOf(value: Readonly<Record<string, unknown>>): string | undefined {
  return typeof value['name'] === 'string' ? value['name'] : undefined;
}

/** The object's `package`, when it is a string. */
export function packageOf(value: Readonly<Record<string, unknown>>): string | undefined {
  return typeof value['package'] === 'string' ? value['package'] : undefined;
}

/** Adds an olm.package object as a new draft package, unless it is invalid or declared again. */
export function addPackage(
  object: CatalogObject,
  packages: Map<string, DraftPackage>,
  warnings: WarningSink,
): void {
  const parsed = PackageObjectSchema.safeParse(object.value);
  if (!parsed.success) {
    const name = nameOf(object.value);
    warnings.add(W.ObjectInvalid, `olm.package is invalid (${issueText(parsed.error)}); dropped`, {
      ...(name === undefined ? {} : { package: name }),
      origin: object.origin,
    });
    return;
  }
  const p = parsed.data;
  const existing = packages.get(p.name);
  if (existing !== undefined) {
    warnings.add(
      W.PackageDuplicate,
      `package "${p.name}" is declared again (first at ${existing.origin}); this one is dropped`,
      { package: p.name, origin: object.origin },
    );
    return;
  }
  packages.set(p.name, {
    name: p.name,
    origin: object.origin,
    defaultChannel:
      p.defaultChannel === undefined || p.defaultChannel === '' ? null : p.defaultChannel,
    bundles: new Map(),
    channels: new Map(),
    deprecations: null,
    deprecation: null,
  });
}

/** Where a bundle's or a channel's warnings point. */
type MemberWhere = { package: string; origin: string } & ({ bundle: string } | { channel: string });

/**
 * The olm.bundle or olm.channel `object` with its package, when it is valid, its package is
 * known and its name is new in that package; otherwise undefined, with the warning that says why.
 */
export function admitMember<T extends { package: string; name: string }>(
  object: CatalogObject,
  kind: 'bundle' | 'channel',
  schema: z.ZodType<T>,
  packages: ReadonlyMap<string, DraftPackage>,
  warnings: WarningSink,
): { member: T; pkg: DraftPackage; where: MemberWhere } | undefined {
  const parsed = schema.safeParse(object.value);
  const origin = object.origin;
  const named = (name: string): { bundle: string } | { channel: string } =>
    kind === 'bundle' ? { bundle: name } : { channel: name };
  if (!parsed.success) {
    const name = nameOf(object.value);
    const pkgName = packageOf(object.value);
    warnings.add(W.ObjectInvalid, `olm.${kind} is invalid (${issueText(parsed.error)}); dropped`, {
      ...(pkgName === undefined ? {} : { package: pkgName }),
      ...(name === undefined ? {} : named(name)),
      origin,
    });
    return undefined;
  }
  const member = parsed.data;
  const where: MemberWhere = { package: member.package, ...named(member.name), origin };
  const pkg = packages.get(member.package);
  if (pkg === undefined) {
    warnings.add(
      W.PackageUnknown,
      `${kind} "${member.name}" belongs to package "${member.package}", which has no olm.package object; dropped`,
      where,
    );
    return undefined;
  }
  const existing = (kind === 'bundle' ? pkg.bundles : pkg.channels).get(member.name);
  if (existing !== undefined) {
    warnings.add(
      kind === 'bundle' ? W.BundleDuplicate : W.ChannelDuplicate,
      `${kind} "${member.name}" is declared again in package "${member.package}" (first at ${existing.origin}); this one is dropped`,
      where,
    );
    return undefined;
  }
  return { member, pkg, where };
}

/** Adds an olm.channel object's usable entries as a draft channel of its package. */
export function addChannel(
  object: CatalogObject,
  packages: Map<string, DraftPackage>,
  warnings: WarningSink,
): void {
  const admitted = admitMember(object, 'channel', ChannelObjectSchema, packages, warnings);
  if (admitted === undefined) return;
  const { member: c, pkg, where } = admitted;
  const origin = object.origin;
  const entries: CatalogChannelEntry[] = [];
  const names = new Set<string>();
  for (const e of c.entries) {
    if (names.has(e.name)) {
      warnings.add(
        W.ChannelEntryDuplicate,
        `channel "${c.name}" lists bundle "${e.name}" more than once; the repeat is dropped`,
        { ...where, bundle: e.name },
      );
      continue;
    }
    if (!pkg.bundles.has(e.name)) {
      warnings.add(
        W.ChannelEntryUnknownBundle,
        `channel "${c.name}" lists bundle "${e.name}", which package "${c.package}" does not have (or which was dropped); entry dropped`,
        { ...where, bundle: e.name },
      );
      continue;
    }
    names.add(e.name);
    entries.push({
      name: e.name,
      replaces: e.replaces === undefined || e.replaces === '' ? null : e.replaces,
      skips: (e.skips ?? []).filter((s) => s !== ''),
      skipRange: e.skipRange === undefined || e.skipRange === '' ? null : e.skipRange,
    });
  }
  if (entries.length === 0) {
    warnings.add(W.ChannelEmpty, `channel "${c.name}" has no usable entries; dropped`, where);
    return;
  }
  pkg.channels.set(c.name, { name: c.name, origin, entries, deprecation: null });
}

/** Marks the package, channels and bundles an olm.deprecations object names as deprecated. */
export function addDeprecations(
  object: CatalogObject,
  packages: Map<string, DraftPackage>,
  warnings: WarningSink,
): void {
  const parsed = DeprecationsObjectSchema.safeParse(object.value);
  const origin = object.origin;
  if (!parsed.success) {
    const pkgName = packageOf(object.value);
    warnings.add(
      W.ObjectInvalid,
      `olm.deprecations is invalid (${issueText(parsed.error)}); dropped`,
      { ...(pkgName === undefined ? {} : { package: pkgName }), origin },
    );
    return;
  }
  const d = parsed.data;
  const pkg = packages.get(d.package);
  if (pkg === undefined) {
    warnings.add(
      W.PackageUnknown,
      `olm.deprecations names package "${d.package}", which has no olm.package object; dropped`,
      { package: d.package, origin },
    );
    return;
  }
  if (pkg.deprecations !== null) {
    warnings.add(
      W.DeprecationDuplicate,
      `package "${d.package}" has more than one olm.deprecations object (first at ${pkg.deprecations.origin}); this one is dropped`,
      { package: d.package, origin },
    );
    return;
  }
  pkg.deprecations = { object: d, origin };
  for (const entry of d.entries) {
    const ref = entry.reference;
    const refName = ref.name ?? '';
    if (ref.schema === 'olm.package') {
      pkg.deprecation = entry.message;
      continue;
    }
    const target =
      ref.schema === 'olm.channel' ? pkg.channels.get(refName) : pkg.bundles.get(refName);
    if (target === undefined) {
      const what = ref.schema === 'olm.channel' ? 'channel' : 'bundle';
      warnings.add(
        W.DeprecationUnknownReference,
        `olm.deprecations names ${what} "${refName}", which package "${d.package}" does not have; ignored`,
        { package: d.package, origin },
      );
      continue;
    }
    target.deprecation = entry.message;
  }
}
