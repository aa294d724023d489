// Writing answers as kube-apiserver does: JSON with its headers, `Warning: 299` headers, Status
// bodies for errors, and an object rendered as the client asked for it (plain, meta.k8s.io Table
// or PartialObjectMetadata).
import type { ApiError } from '../../api/errors.js';
import type { ResourceType } from '../../resources/types.js';
import { jsonBytes } from '../../storage/serialization.js';
import { text, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import { partialObjectMetadata, toTable, type IncludeObject } from '../table.js';
import type { ApiRequest, ApiResponse } from '../transport.js';

/** Content type of server-side Table answers. */
export const tableContentType = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** One `Warning` header value as kube-apiserver writes it: `299 - "<text>"`. */
export function warningHeaderValue(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

/** Answers with a JSON value (encoded once when it is a stored object). */
export function sendJson(
  res: ApiResponse,
  code: number,
  body: JsonValue,
  contentType = 'application/json',
  warnings: readonly string[] = [],
): void {
  sendBytes(res, code, jsonBytes(body), contentType, warnings);
}

/** Answers with encoded JSON, the warnings after any set earlier for the whole request. */
export function sendBytes(
  res: ApiResponse,
  code: number,
  body: Buffer,
  contentType = 'application/json',
  warnings: readonly string[] = [],
): void {
  const headers: Record<string, string | string[]> = {
    'content-type': contentType,
    'content-length': String(body.length),
    'cache-control': 'no-cache, private',
  };
  if (warnings.length > 0) {
    // After any warning set earlier for the whole request (a deprecated version's), as kube orders them.
    const earlier = res.getHeader('warning');
    headers['warning'] = [
      ...(earlier === undefined ? [] : Array.isArray(earlier) ? earlier : [earlier]),
      ...warnings.map(warningHeaderValue),
    ];
  }
  res.send(code, headers, body);
}

/** Answers with the error's Status, or ends an answer already under way. */
export function sendError(res: ApiResponse, error: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, error.code, error.toStatus());
}

/** Whether the client asked for a server-side Table. */
export function tableAccepted(accept: string | undefined): boolean {
  return accept !== undefined && /as=Table/.test(accept);
}

/** Whether the client asked for PartialObjectMetadata (and not plain JSON first). */
export function metadataAccepted(accept: string | undefined): boolean {
  return (
    accept !== undefined &&
    /as=PartialObjectMetadata/.test(accept) &&
    !/^application\/json\s*(,|$)/.test(accept)
  );
}

/** The includeObject of Table requests (Metadata by default). */
export function includeObjectOf(query: URLSearchParams): IncludeObject {
  return (query.get('includeObject') as IncludeObject | null) ?? 'Metadata';
}

/** Answers with one object as the client asked for it: plain, as a Table, or its metadata only. */
export function sendObject(
  req: ApiRequest,
  res: ApiResponse,
  query: URLSearchParams,
  type: ResourceType,
  code: number,
  object: JsonObject,
  warnings: readonly string[] = [],
): void {
  const accept = req.headers['accept'];
  if (tableAccepted(accept)) {
    const table = toTable(type, [object], {
      resourceVersion: text((object['metadata'] as JsonObject)['resourceVersion'] ?? ''),
      includeObject: includeObjectOf(query),
      now: Date.now(),
    });
    return sendJson(res, code, table, tableContentType, warnings);
  }
  if (metadataAccepted(accept))
    return sendJson(res, code, partialObjectMetadata(object), 'application/json', warnings);
  sendJson(res, code, object, 'application/json', warnings);
}
