// WATCH of a collection or one object: the current state or the changes since a
// resourceVersion, then live changes, as JSON lines of objects, of their metadata only
// (PartialObjectMetadata) or of Table rows; bookmarks when allowed.
import type { FieldSelector } from '../../../../shared/kube/selectors.js';
import { text, type JsonObject } from '../../../../shared/kube/json.js';
import { apiVersionOf, typeStorageKey } from '../../../resources/registry.js';
import { storedFieldSelector } from '../../../api/listing.js';
import { withReadDefaults } from '../../../api/resource-store.js';
import type { WatchForm } from '../../../storage/types.js';
import { partialObjectMetadata, toTable } from '../../table.js';
import { batchedSink } from '../../watch-sink.js';
import { includeObjectOf, metadataAccepted, tableAccepted, tableContentType } from '../answers.js';
import { parseResourceVersion, parseSelectors } from '../request.js';
import type { ResourceRequest } from '../types.js';

/** Objects as PartialObjectMetadata (meta.k8s.io/v1), for clients that asked for metadata only. */
const metadataForm: WatchForm = { id: 'PartialObjectMetadata', render: partialObjectMetadata };

// One shared form per custom resource version's schema, so lines stay encoded once per event.
const readDefaultForms = new WeakMap<JsonObject, WatchForm>();
let formCount = 0;
function readDefaultsForm(type: ResourceRequest['type']): WatchForm | undefined {
  const schema = type.schema;
  if (type.crdName === undefined || schema === undefined) return undefined;
  let form = readDefaultForms.get(schema);
  if (form === undefined) {
    form = {
      id: `defaults-${++formCount}-${apiVersionOf(type.group, type.version)}`,
      // Bookmarks (no name) carry only a resourceVersion, never defaulted fields.
      render: (object) =>
        typeof (object['metadata'] as JsonObject | undefined)?.['name'] === 'string'
          ? withReadDefaults(type, object)
          : object,
    };
    readDefaultForms.set(schema, form);
  }
  return form;
}

/** Answers `watch`: starts the stream; it ends when the client goes or the watch times out. */
export function watch({ req, res, path, query, type, server }: ResourceRequest): void {
  const { core, hub } = server;
  const { labels, fields } = parseSelectors(query);
  const namedFields: FieldSelector =
    path.name !== undefined
      ? [...fields, { field: 'metadata.name', operator: 'Equals', value: path.name }]
      : fields;
  const storedFields = storedFieldSelector(type, namedFields);
  // A version served from another's storage converts each event as it is written.
  const converted = type.conversion?.fromStorage;
  const from = parseResourceVersion(query.get('resourceVersion'));
  const timeout = query.get('timeoutSeconds');
  const accept = req.headers['accept'];
  const table = tableAccepted(accept);
  const metadataOnly = !table && metadataAccepted(accept);
  const includeObject = includeObjectOf(query);
  res.start(200, {
    'content-type': table ? tableContentType : 'application/json',
    'cache-control': 'no-cache, private',
  });
  const handle = hub.open(
    {
      key: typeStorageKey(type),
      apiVersion: apiVersionOf(type.group, type.version),
      kind: type.kind,
      namespace: type.namespaced ? path.namespace : undefined,
      matches: (object) => core.matches(object, labels, storedFields),
      ...(table
        ? {
            render: (object: JsonObject) =>
              toTable(type, [converted ? converted(object) : withReadDefaults(type, object)], {
                resourceVersion: text((object['metadata'] as JsonObject)['resourceVersion'] ?? ''),
                includeObject,
                now: Date.now(),
              }),
          }
        : metadataOnly
          ? { form: metadataForm }
          : converted
            ? { render: converted }
            : withForm(readDefaultsForm(type))),
    },
    batchedSink(res),
    {
      fromResourceVersion: from,
      allowBookmarks: query.get('allowWatchBookmarks') === 'true',
      timeoutSeconds: timeout === null ? undefined : Number(timeout),
      bookmarkIntervalMs: server.bookmarkIntervalMs,
    },
  );
  res.onClose(() => handle.close());
}

function withForm(form: WatchForm | undefined): { form?: WatchForm } {
  return form === undefined ? {} : { form };
}
