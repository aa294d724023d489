// Dependency predicates: what a bundle requires of another operator, parsed from its
// properties (olm.gvk.required, olm.package.required, olm.label.required, olm.constraint) and
// matched against candidate bundles, as upstream OLM's resolver does.
import semver from 'semver';
import { skipRangeOptions } from '../catalog/index.js';
import { CelParseError, compileCel, type CelProgram } from './cel.js';
import type { ApiFact, PropertyFact } from './model.js';

/** What a predicate is tested against: a catalog bundle or an installed CSV. */
export interface PredicateSubject {
  readonly package: string | null;
  readonly version: semver.SemVer | null;
  readonly provided: readonly ApiFact[];
  readonly labels: readonly string[];
  /** Every property of the candidate (for CEL rules), computed on demand. */
  allProperties(): readonly PropertyFact[];
}

/** A requirement one operator states about another. */
export type Predicate =
  | { readonly kind: 'gvk'; readonly api: ApiFact }
  | {
      readonly kind: 'package';
      readonly packageName: string;
      readonly range: semver.Range;
      readonly rangeText: string;
    }
  | { readonly kind: 'label'; readonly label: string }
  | { readonly kind: 'cel'; readonly program: CelProgram }
  | { readonly kind: 'all' | 'any' | 'not'; readonly children: readonly Predicate[] };

/** A dependency: a predicate plus the message its author gave for when it fails. */
export interface Dependency {
  readonly predicate: Predicate;
  readonly failureMessage: string | null;
}

/** A dependency property that cannot be used (bad range, unknown constraint field, ...). */
export class DependencyParseError extends Error {
  override readonly name = 'DependencyParseError';
}

/** Formats a GVK the way Kubernetes people read it: Kind (group/version). */
export function formatApi(api: ApiFact): string {
  return `${api.kind} (${api.group === '' ? '' : `${api.group}/`}${api.version})`;
}

/** A short description of what satisfies the predicate, e.g. "providing EtcdCluster (etcd.database.coreos.com/v1beta2)". */
export function describePredicate(p: Predicate): string {
  switch (p.kind) {
    case 'gvk':
      return `providing ${formatApi(p.api)}`;
    case 'package':
      return `from package ${p.packageName} with version in range ${p.rangeText}`;
    case 'label':
      return `with label ${p.label}`;
    case 'cel':
      return `satisfying CEL rule ${JSON.stringify(p.program.rule)}`;
    case 'all':
      return `(${p.children.map(describePredicate).join(' and ')})`;
    case 'any':
      return `(${p.children.map(describePredicate).join(' or ')})`;
    case 'not':
      return `not (${p.children.map(describePredicate).join(' and ')})`;
  }
}

/** A stable key of the predicate (for caching candidate lists). */
export function predicateKey(p: Predicate): string {
  switch (p.kind) {
    case 'gvk':
      return `gvk:${p.api.group}/${p.api.version}/${p.api.kind}`;
    case 'package':
      return `pkg:${p.packageName}@${p.rangeText}`;
    case 'label':
      return `label:${p.label}`;
    case 'cel':
      return `cel:${p.program.rule}`;
    default:
      return `${p.kind}(${p.children.map(predicateKey).join(',')})`;
  }
}

/** Whether the subject satisfies the predicate. */
export function testPredicate(p: Predicate, s: PredicateSubject): boolean {
  switch (p.kind) {
    case 'gvk':
      return s.provided.some(
        (a) => a.kind === p.api.kind && a.group === p.api.group && a.version === p.api.version,
      );
    case 'package':
      return s.package === p.packageName && s.version !== null && p.range.test(s.version);
    case 'label':
      return s.labels.includes(p.label);
    case 'cel':
      return p.program.matches(s.allProperties());
    case 'all':
      return p.children.every((c) => testPredicate(c, s));
    case 'any':
      return p.children.some((c) => testPredicate(c, s));
    case 'not':
      // Upstream's Not(a, b) is "none of them holds".
      return !p.children.some((c) => testPredicate(c, s));
  }
}

function objectValue(value: unknown, what: string): Record<string, unknown> {
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v) as unknown;
    } catch {
      throw new DependencyParseError(`${what} is not valid JSON`);
    }
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new DependencyParseError(`${what} must be an object`);
  }
  return v as Record<string, unknown>;
}

function text(o: Record<string, unknown>, key: string, what: string): string {
  const v = o[key];
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new DependencyParseError(`${what}.${key} must be a string`);
  return v;
}

/** Parses a semver range as upstream (blang/semver ParseRange) accepts it; throws DependencyParseError. */
export function parseRange(rangeText: string, what: string): semver.Range {
  try {
    if (rangeText.trim() === '') throw new Error('empty range');
    return new semver.Range(rangeText, skipRangeOptions);
  } catch (error) {
    throw new DependencyParseError(
      `${what}: invalid version range "${rangeText}" (${(error as Error).message})`,
    );
  }
}

function gvkPredicate(o: Record<string, unknown>, what: string): Predicate {
  return {
    kind: 'gvk',
    api: {
      group: text(o, 'group', what),
      version: text(o, 'version', what),
      kind: text(o, 'kind', what),
    },
  };
}

function packagePredicate(o: Record<string, unknown>, what: string): Predicate {
  const rangeText = text(o, 'versionRange', what);
  return {
    kind: 'package',
    packageName: text(o, 'packageName', what),
    range: parseRange(rangeText, what),
    rangeText,
  };
}

const constraintKeys = new Set(['failureMessage', 'gvk', 'package', 'all', 'any', 'not', 'cel']);

function constraintPredicate(value: unknown, what: string): Predicate {
  const o = objectValue(value, what);
  for (const key of Object.keys(o)) {
    // Upstream decodes with DisallowUnknownFields; its error reads the same.
    if (!constraintKeys.has(key)) throw new DependencyParseError(`json: unknown field "${key}"`);
  }
  if (o.gvk !== undefined) return gvkPredicate(objectValue(o.gvk, `${what}.gvk`), `${what}.gvk`);
  if (o.package !== undefined) {
    return packagePredicate(objectValue(o.package, `${what}.package`), `${what}.package`);
  }
  for (const kind of ['all', 'any', 'not'] as const) {
    if (o[kind] === undefined) continue;
    const compound = objectValue(o[kind], `${what}.${kind}`);
    const list = compound.constraints;
    if (!Array.isArray(list) || list.length === 0) {
      throw new DependencyParseError(`${what}.${kind}.constraints must be a non-empty list`);
    }
    return {
      kind,
      children: list.map((c, i) => constraintPredicate(c, `${what}.${kind}.constraints[${i}]`)),
    };
  }
  if (o.cel !== undefined) {
    const rule = objectValue(o.cel, `${what}.cel`).rule;
    if (typeof rule !== 'string' || rule === '') {
      throw new DependencyParseError(`${what}.cel.rule must be a non-empty string`);
    }
    try {
      return { kind: 'cel', program: compileCel(rule) };
    } catch (error) {
      if (error instanceof CelParseError) {
        throw new DependencyParseError(
          `${what}.cel: invalid rule ${JSON.stringify(rule)}: ${error.message}`,
        );
      }
      throw error;
    }
  }
  throw new DependencyParseError('constraint is empty');
}

/** Turns one dependency property into a Dependency, null for property types that state none. */
export function dependencyOfProperty(property: PropertyFact): Dependency | null {
  switch (property.type) {
    case 'olm.gvk.required':
      return {
        predicate: gvkPredicate(objectValue(property.value, property.type), property.type),
        failureMessage: null,
      };
    case 'olm.package.required':
      return {
        predicate: packagePredicate(objectValue(property.value, property.type), property.type),
        failureMessage: null,
      };
    case 'olm.label.required':
      return {
        predicate: {
          kind: 'label',
          label: text(objectValue(property.value, property.type), 'label', property.type),
        },
        failureMessage: null,
      };
    case 'olm.constraint': {
      const predicate = constraintPredicate(property.value, 'olm.constraint');
      const o = objectValue(property.value, 'olm.constraint');
      const message = typeof o.failureMessage === 'string' ? o.failureMessage : null;
      return { predicate, failureMessage: message };
    }
    default:
      return null;
  }
}

/** The labels an operator carries (olm.label properties). */
export function labelsOf(properties: readonly PropertyFact[]): string[] {
  const out: string[] = [];
  for (const p of properties) {
    if (p.type !== 'olm.label') continue;
    try {
      const label = objectValue(p.value, p.type).label;
      if (typeof label === 'string') out.push(label);
    } catch {
      // An unreadable label matches nothing.
    }
  }
  return out;
}
