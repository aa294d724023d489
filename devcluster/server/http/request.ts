// Reading a request as kube-apiserver does: its target (path and query), the resource path and
// the verb, the query's options (selectors, resourceVersion, fieldValidation, dryRun) and the
// body (JSON, YAML or protobuf; patches; DeleteOptions), with kube's errors for bad input.
import { parse as parseYaml } from 'yaml';
import type { UserInfo } from '../../auth/index.js';
import { ApiError, badRequest } from '../../api/errors.js';
import type { DeleteOptions, PatchType, WriteOptions } from '../../api/types.js';
import { unsupportedPatchType } from '../../api/patching.js';
import type { ResourceType } from '../../resources/types.js';
import { isJsonObject, text, type JsonObject } from '../../../shared/kube/json.js';
import {
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
  type FieldSelector,
  type LabelSelector,
} from '../../../shared/kube/selectors.js';
import { decodeProtobufBody, protobufMediaType } from '../protobuf.js';
import type { ApiRequest } from '../transport.js';
import type { ResourcePath, ResourceVerb } from './types.js';

/** Largest request body accepted (kube-apiserver's limit). */
export const maxRequestBytes = 3 * 1024 * 1024;

/** Parses a resource path; undefined for paths that are not resource requests. */
export function parseResourcePath(pathname: string): ResourcePath | undefined {
  const parts: string[] = [];
  for (const part of pathname.split('/'))
    if (part !== '') parts.push(part.includes('%') ? decodeURIComponent(part) : part);
  let group: string;
  let version: string;
  // Index of the first part after the group version.
  let at: number;
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1] ?? '';
    at = 2;
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    at = 3;
  } else {
    return undefined;
  }
  let watchPath = false;
  if (parts[at] === 'watch') {
    watchPath = true;
    at++;
  }
  let namespace: string | undefined;
  if (
    parts[at] === 'namespaces' &&
    parts.length - at >= 3 &&
    !(group === '' && (parts[at + 2] === 'status' || parts[at + 2] === 'finalize'))
  ) {
    namespace = parts[at + 1];
    at += 2;
  }
  const resource = parts[at];
  if (resource === undefined || parts.length - at > 3) return undefined;
  return {
    group,
    version,
    namespace,
    resource,
    name: parts[at + 1],
    subresource: parts[at + 2] ?? '',
    watchPath,
  };
}

/**
 * Path and query of a request target. Plain targets (the API's own paths) are split directly;
 * anything URL parsing could change (dot segments, percent-encoding, fragments) goes through it.
 */
export function requestTarget(target: string): { pathname: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const search = q < 0 ? '' : target.slice(q + 1);
  if (plainPath.test(path) && !path.includes('/.') && !search.includes('#'))
    return { pathname: path, query: search === '' ? noQuery : new URLSearchParams(search) };
  const url = new URL(target, 'https://devcluster');
  return { pathname: url.pathname, query: url.searchParams };
}

const plainPath = /^\/(?!\/)[\w\-.~/]*$/;

/** The query of the many requests without one (writes, gets): shared, and never modified. */
const noQuery = new URLSearchParams();

/** The authorizer verb of a resource request. */
export function verbOf(method: string, path: ResourcePath, query: URLSearchParams): ResourceVerb {
  const watch = path.watchPath || query.get('watch') === 'true' || query.get('watch') === '1';
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (path.name === undefined) return watch ? 'watch' : 'list';
      return watch ? 'watch' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return path.name === undefined ? 'deletecollection' : 'delete';
    default:
      return '';
  }
}

/** The label and field selectors of a list, watch or deletecollection (400 when malformed). */
export function parseSelectors(query: URLSearchParams): {
  labels: LabelSelector;
  fields: FieldSelector;
} {
  try {
    return {
      labels: parseLabelSelector(query.get('labelSelector') ?? ''),
      fields: parseFieldSelector(query.get('fieldSelector') ?? ''),
    };
  } catch (error) {
    if (error instanceof SelectorError) throw badRequest(error.message);
    throw error;
  }
}

/** A list's or watch's resourceVersion; undefined for none, "" and "0" (400 when not a number). */
export function parseResourceVersion(value: string | null): number | undefined {
  if (value === null || value === '' || value === '0') return undefined;
  if (!/^\d+$/.test(value)) {
    throw new ApiError(
      'BadRequest',
      `resourceVersion: Invalid value: ${JSON.stringify(value)}: invalid resource version`,
      {
        causes: [
          {
            type: 'FieldValueInvalid',
            field: 'resourceVersion',
            message: `Invalid value: ${JSON.stringify(value)}`,
          },
        ],
      },
    );
  }
  return Number(value);
}

/** The product of the client's User-Agent ("kubectl" of "kubectl/v1.30.0 (linux/amd64) ..."), kube's default field manager. */
function userAgentProduct(req: ApiRequest): string {
  const agent = req.headers['user-agent'];
  if (agent === undefined) return 'unknown';
  const slash = agent.indexOf('/');
  return slash < 0 ? agent : agent.slice(0, slash);
}

/** The options of a write: fieldValidation, dryRun, fieldManager (default: the client's product). */
export function writeOptions(
  query: URLSearchParams,
  req: ApiRequest,
  user: UserInfo,
): WriteOptions {
  const validation = query.get('fieldValidation') ?? 'Warn';
  if (validation !== 'Strict' && validation !== 'Warn' && validation !== 'Ignore') {
    throw badRequest(
      `fieldValidation: Unsupported value: ${JSON.stringify(validation)}: supported values: "Ignore", "Strict", "Warn"`,
    );
  }
  const dryRun = query.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All'))
    throw badRequest(
      `dryRun: Unsupported value: ${JSON.stringify(dryRun[0])}: supported values: "All"`,
    );
  return {
    dryRun: dryRun.length > 0,
    fieldManager: query.get('fieldManager') ?? userAgentProduct(req),
    fieldValidation: validation,
    warnings: [],
    user,
  };
}

/** The whole body, refused with 413 beyond maxRequestBytes (declared or sent). */
export function readBody(req: ApiRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    const tooLarge = (): ApiError =>
      new ApiError(
        'RequestEntityTooLarge',
        `Request entity too large: limit is ${maxRequestBytes}`,
      );
    if (declared > maxRequestBytes) {
      req.discardBody();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const source = req.body;
    source.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxRequestBytes) {
        failed = true;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    source.on('end', () => {
      if (!failed) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
    source.on('error', reject);
  });
}

/** The media type of the body, lower-case without parameters (application/json when absent). */
export function mediaType(req: ApiRequest): string {
  const header = req.headers['content-type'];
  if (header === undefined) return 'application/json';
  const semicolon = header.indexOf(';');
  return (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** Decodes a JSON or YAML body into an object, with kube's errors for bad input. */
export function decodeBody(raw: Buffer, contentType: string): JsonObject {
  const source = raw.toString('utf8');
  if (source.trim() === '') throw badRequest('the body of the request was empty');
  let value: unknown;
  if (contentType === 'application/json' || contentType === '') {
    try {
      value = JSON.parse(source);
    } catch (error) {
      throw badRequest(
        `couldn't get version/kind; json parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`,
      );
    }
  } else if (contentType === protobufMediaType) {
    return decodeProtobufBody(raw);
  } else if (
    contentType === 'application/yaml' ||
    contentType === 'application/x-yaml' ||
    contentType === 'text/yaml'
  ) {
    try {
      value = parseYaml(source);
    } catch (error) {
      throw badRequest(
        `couldn't get version/kind; yaml parse error: ${error instanceof Error ? error.message : 'invalid YAML'}`,
      );
    }
  } else {
    throw new ApiError(
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf`,
    );
  }
  if (!isJsonObject(value))
    throw badRequest(`couldn't get version/kind; json parse error: the body must be a JSON object`);
  return value;
}

/** The patch type of a PATCH body's media type; 415 for one the resource does not take. */
export function patchTypeOf(contentType: string, type: ResourceType): PatchType {
  switch (contentType) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      if (type.crdName !== undefined) throw unsupportedPatchType(type);
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      return 'apply';
    default:
      throw unsupportedPatchType(type);
  }
}

/** DeleteOptions from the query and the body (JSON or protobuf), the query winning. */
export function parseDeleteOptions(
  query: URLSearchParams,
  raw: Buffer,
  contentType: string,
): DeleteOptions {
  let body: JsonObject = {};
  if (contentType === protobufMediaType && raw.length > 0)
    body = decodeProtobufBody(raw, 'DeleteOptions');
  else if (raw.length > 0 && raw.toString('utf8').trim() !== '')
    body = decodeBody(raw, 'application/json');
  let policy =
    query.get('propagationPolicy') ??
    (typeof body['propagationPolicy'] === 'string' ? body['propagationPolicy'] : undefined);
  const orphan =
    query.get('orphanDependents') ??
    (typeof body['orphanDependents'] === 'boolean' ? text(body['orphanDependents']) : undefined);
  if (policy === undefined && orphan === 'true') policy = 'Orphan';
  if (
    policy !== undefined &&
    policy !== 'Background' &&
    policy !== 'Foreground' &&
    policy !== 'Orphan'
  ) {
    throw badRequest(
      `propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  const preconditions = isJsonObject(body['preconditions']) ? body['preconditions'] : {};
  const dryRun =
    query.getAll('dryRun').length > 0 ||
    (Array.isArray(body['dryRun']) && body['dryRun'].length > 0);
  return {
    propagationPolicy: policy,
    preconditions: {
      uid: typeof preconditions['uid'] === 'string' ? preconditions['uid'] : undefined,
      resourceVersion:
        typeof preconditions['resourceVersion'] === 'string'
          ? preconditions['resourceVersion']
          : undefined,
    },
    dryRun,
  };
}
