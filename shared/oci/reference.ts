// Image references as container runtimes read them: [registry/]repository[:tag][@digest],
// with Docker Hub's defaults (docker.io, library/, latest).
import { OciError } from './errors.js';

/** A parsed image reference. */
export interface ImageReference {
  /** Registry host[:port] as written (docker.io for Docker Hub). */
  registry: string;
  /** Repository path inside the registry. */
  repository: string;
  /** Tag, when given (latest when neither a tag nor a digest is). */
  tag?: string;
  /** Digest (algorithm:hex), when given; it wins over the tag for pulling. */
  digest?: string;
}

const dockerHub = 'docker.io';
const repositoryPart = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const tagPattern = /^[\w][\w.-]{0,127}$/;
const digestPattern = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;

/** Parses an image reference, or throws InvalidReference naming what is wrong. */
export function parseImageReference(text: string): ImageReference {
  const invalid = (why: string) =>
    new OciError('InvalidReference', `invalid image reference "${text}": ${why}`);
  if (text === '' || text.trim() !== text) throw invalid('empty or surrounded by spaces');
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!digestPattern.test(digest)) throw invalid(`bad digest "${digest}"`);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!tagPattern.test(tag)) throw invalid(`bad tag "${tag}"`);
  }
  const parts = rest.split('/');
  let registry = dockerHub;
  const first = parts[0] ?? '';
  // The first component is a registry when it looks like a host: a dot, a port or localhost.
  if (parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    registry = first;
    parts.shift();
  }
  if (registry === 'index.docker.io') registry = dockerHub;
  if (registry === dockerHub && parts.length === 1) parts.unshift('library');
  for (const part of parts) {
    if (!repositoryPart.test(part)) throw invalid(`bad repository component "${part}"`);
  }
  const reference: ImageReference = { registry, repository: parts.join('/') };
  if (tag !== undefined) reference.tag = tag;
  if (digest !== undefined) reference.digest = digest;
  if (tag === undefined && digest === undefined) reference.tag = 'latest';
  return reference;
}

/** The reference in its canonical text form. */
export function formatImageReference(ref: ImageReference): string {
  const tag = ref.tag === undefined ? '' : `:${ref.tag}`;
  const digest = ref.digest === undefined ? '' : `@${ref.digest}`;
  return `${ref.registry}/${ref.repository}${tag}${digest}`;
}

/** Whether a registry host is on a loopback address (plain HTTP is allowed only there). */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.startsWith('[')
    ? registry.slice(1, registry.indexOf(']'))
    : (registry.split(':')[0] ?? '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
