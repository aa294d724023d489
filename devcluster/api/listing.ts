// Lists as kube-apiserver answers them: label and field selectors (only the fields each resource
// can be selected by), pages of `limit` objects with continue tokens, and the resourceVersion the
// list is consistent with.
import { ApiError, badRequest } from './errors.js';
import { present, type ResourceStore } from './resource-store.js';
import type { ListOptions, ListResult } from './types.js';
import { isJsonObject, text, type JsonObject, type JsonValue } from '../../shared/kube/json.js';
import {
  matchesFieldSelector,
  matchesLabelSelector,
  type FieldSelector,
  type LabelSelector,
} from '../../shared/kube/selectors.js';
import type { ResourceType } from '../resources/types.js';

/** The value of a field-selector field of an object ("metadata.name", "involvedObject.kind", ...). */
export function fieldValueOf(object: JsonObject, field: string): string | undefined {
  let current: JsonValue | undefined = object;
  for (const part of field.split('.')) {
    if (!isJsonObject(current)) return undefined;
    current = current[part];
  }
  if (current === undefined || current === null) return undefined;
  return typeof current === 'string' ? current : JSON.stringify(current);
}

const supportedFieldSelectors: Record<string, readonly string[]> = {
  '/events': [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  '/pods': [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'status.phase',
    'status.podIP',
  ],
  '/secrets': ['type'],
  '/namespaces': ['status.phase'],
};

/** Throws 400 when a field selector names a field the resource cannot be selected by. */
export function checkFieldSelector(type: ResourceType, selector: FieldSelector): void {
  const converted = type.conversion?.fieldLabels;
  const extra = converted
    ? Object.keys(converted)
    : (supportedFieldSelectors[`${type.group}/${type.resource}`] ?? []);
  for (const requirement of selector) {
    if (requirement.field === 'metadata.name' || requirement.field === 'metadata.namespace')
      continue;
    if (extra.includes(requirement.field)) continue;
    throw badRequest(`field label not supported: ${requirement.field}`);
  }
}

/** A field selector of the type's version as the stored fields it reads (converted versions). */
export function storedFieldSelector(type: ResourceType, selector: FieldSelector): FieldSelector {
  const labels = type.conversion?.fieldLabels;
  if (labels === undefined) return selector;
  return selector.map((r) => ({ ...r, field: labels[r.field] ?? r.field }));
}

/** Whether an object matches label and field selectors. */
export function matchesSelectors(
  object: JsonObject,
  labels: LabelSelector,
  fields: FieldSelector,
): boolean {
  const metadata = object['metadata'] as JsonObject;
  if (
    labels.length > 0 &&
    !matchesLabelSelector(labels, metadata['labels'] as Record<string, string> | undefined)
  ) {
    return false;
  }
  return fields.length === 0 || matchesFieldSelector(fields, (f) => fieldValueOf(object, f));
}

/** Where a list continues: the state it is consistent with and the last position answered. */
interface ContinueToken {
  rv: number;
  start: string;
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isJsonObject(parsed)) {
      const { rv, start } = parsed;
      if (typeof rv === 'number' && typeof start === 'string') return { rv, start };
    }
  } catch {
    // fall through to the error below
  }
  throw badRequest('continue key is not valid: illegal base64 data at input byte 0');
}

/** Lists objects (namespace undefined = all namespaces) with selectors and limit/continue. */
export function listObjects(
  storage: ResourceStore,
  type: ResourceType,
  namespace: string | undefined,
  options: ListOptions,
): ListResult {
  checkFieldSelector(type, options.fieldSelector);
  const fieldSelector = storedFieldSelector(type, options.fieldSelector);
  let rv = storage.store.currentResourceVersion();
  let start = '';
  if (options.continueToken) {
    const token = decodeContinue(options.continueToken);
    if (storage.store.isExpired(token.rv)) {
      throw new ApiError(
        'Expired',
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
      );
    }
    rv = token.rv;
    start = token.start;
  }
  const all = storage.list(type, namespace);
  const items: JsonObject[] = [];
  let continueToken: string | undefined;
  let remaining = 0;
  for (const object of all) {
    const metadata = object['metadata'] as JsonObject;
    const position = `${text(metadata['namespace'] ?? '')}/${text(metadata['name'])}`;
    if (start !== '' && position <= start) continue;
    if (!matchesSelectors(object, options.labelSelector, fieldSelector)) continue;
    if (options.limit !== undefined && options.limit > 0 && items.length >= options.limit) {
      if (continueToken === undefined) {
        const last = items[items.length - 1]?.['metadata'] as JsonObject;
        continueToken = Buffer.from(
          JSON.stringify({
            rv,
            start: `${text(last['namespace'] ?? '')}/${text(last['name'])}`,
          }),
        ).toString('base64url');
      }
      remaining++;
      continue;
    }
    items.push(present(type, object));
  }
  return {
    items,
    resourceVersion: text(rv),
    continueToken,
    remainingItemCount:
      continueToken !== undefined &&
      options.labelSelector.length === 0 &&
      options.fieldSelector.length === 0
        ? remaining
        : undefined,
  };
}
