// Mirror rules in the style of registries.conf and ImageDigestMirrorSet: a reference whose
// registry/repository starts with a rule's source is tried at each mirror first, then at its
// own registry.
import { OciError } from './errors.js';
import type { ImageReference } from './reference.js';
import type { MirrorRule } from './types.js';

/** Where to try a reference, in order: matching mirrors, then the reference itself. */
export function candidatesFor(ref: ImageReference, rules: readonly MirrorRule[]): ImageReference[] {
  const name = `${ref.registry}/${ref.repository}`;
  let best: MirrorRule | undefined;
  for (const rule of rules) {
    const matches = name === rule.source || name.startsWith(`${rule.source}/`);
    if (matches && (best === undefined || rule.source.length > best.source.length)) best = rule;
  }
  if (best === undefined || (best.digestOnly && ref.digest === undefined)) return [ref];
  const rest = name.slice(best.source.length);
  const mirrored = best.mirrors.map((mirror) => {
    const full = `${mirror}${rest}`;
    const slash = full.indexOf('/');
    return { ...ref, registry: full.slice(0, slash), repository: full.slice(slash + 1) };
  });
  return [...mirrored, ref];
}

/**
 * Parses the mirror option: rules separated by `;`, each `source=mirror[,mirror…]`. Mirrors
 * serve pulls by digest only (as ImageDigestMirrorSet); a source ending in `!tags` lets pulls
 * by tag use them too (registries.conf's default).
 */
export function parseMirrorRules(text: string, option: string): MirrorRule[] {
  const rules: MirrorRule[] = [];
  for (const raw of text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const eq = raw.indexOf('=');
    const bad = (why: string) =>
      new OciError('InvalidReference', `${option}: bad mirror rule "${raw}": ${why}`);
    if (eq < 0) throw bad('expected source=mirror[,mirror…]');
    let source = raw.slice(0, eq).trim();
    const withTags = source.endsWith('!tags');
    if (withTags) source = source.slice(0, -'!tags'.length);
    const mirrors = raw
      .slice(eq + 1)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (source === '' || mirrors.length === 0)
      throw bad('a source and at least one mirror are needed');
    for (const location of [source, ...mirrors]) {
      if (!/^[\w.-]+(:\d+)?(\/[\w./-]+)?$/.test(location))
        throw bad(`"${location}" is not registry[/repository]`);
    }
    rules.push({ source, mirrors, digestOnly: !withTags });
  }
  return rules;
}
