// kube-apiserver's support for kubectl moving an object from client-side to server-side apply,
// for the field manager "kubectl" only (lastAppliedManager and lastAppliedUpdater of its field
// manager): conflicts on fields the last-applied-configuration annotation set to their live
// values are forced, and an annotation the object keeps is rewritten to the applied configuration.
import type { JsonObject } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import { serverSideApply, type ApplyOptions } from './apply.js';
import { ApplyConflictError } from './errors.js';
import { compareObjects, fieldSetOf } from './fields.js';
import { describePath } from './fieldset.js';
import { canonicalJson, cloneJson } from './values.js';

// Where kubectl's client-side apply keeps its last applied configuration.
const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

// kube-apiserver grants the migration to kubectl's default server-side apply manager only.
const kubectlManager = 'kubectl';

function annotationsOf(object: JsonObject): JsonObject | undefined {
  const metadata = object['metadata'];
  const annotations = isJsonObject(metadata) ? metadata['annotations'] : undefined;
  return isJsonObject(annotations) ? annotations : undefined;
}

/**
 * Fields (in conflict notation, e.g. ".data.a") the last applied configuration sets to the value
 * they have now: client-side apply owned them, so kubectl may take them over without --force.
 */
function fieldsOwnedByLastApplied(live: JsonObject, options: ApplyOptions): Set<string> {
  const annotation = annotationsOf(live)?.[lastAppliedAnnotation];
  if (typeof annotation !== 'string' || annotation === '') return new Set();
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(annotation);
  } catch {
    return new Set();
  }
  if (!isJsonObject(lastApplied) || lastApplied['apiVersion'] !== options.apiVersion)
    return new Set();
  const liveView: JsonObject = { ...live };
  if (isJsonObject(live['metadata'])) {
    const metadata: JsonObject = { ...live['metadata'] };
    delete metadata['managedFields'];
    liveView['metadata'] = metadata;
  }
  try {
    const differences = compareObjects(lastApplied, liveView, options.rules);
    const owned = fieldSetOf(lastApplied, options.rules, false)
      .difference(differences.modified)
      .difference(differences.added)
      .difference(differences.removed);
    return new Set(owned.paths().map(describePath));
  } catch {
    // A last applied configuration of the wrong shape grants nothing, as in kube-apiserver.
    return new Set();
  }
}

// The annotation kube-apiserver writes: the applied configuration without the annotation, as
// Go's JSON encoder writes it (sorted keys, trailing newline).
function withLastApplied(result: JsonObject, applied: JsonObject): JsonObject {
  const annotations = annotationsOf(result);
  const current = annotations?.[lastAppliedAnnotation];
  if (annotations === undefined || typeof current !== 'string' || current === '') return result;
  const configuration = cloneJson(applied);
  const appliedAnnotations = annotationsOf(configuration);
  if (appliedAnnotations !== undefined) delete appliedAnnotations[lastAppliedAnnotation];
  annotations[lastAppliedAnnotation] = `${canonicalJson(configuration)}\n`;
  return result;
}

/**
 * Server-side apply as kube-apiserver's field manager runs it: serverSideApply, plus, for the
 * manager "kubectl", the client-side apply migration (see the file comment).
 */
export function applyWithLastApplied(
  live: JsonObject | undefined,
  applied: JsonObject,
  options: ApplyOptions,
): JsonObject {
  if (options.manager !== kubectlManager) return serverSideApply(live, applied, options);
  let result: JsonObject;
  try {
    result = serverSideApply(live, applied, options);
  } catch (error) {
    if (!(error instanceof ApplyConflictError) || live === undefined) throw error;
    const allowed = fieldsOwnedByLastApplied(live, options);
    const remaining = error.conflicts.filter((c) => !allowed.has(c.field));
    if (remaining.length === error.conflicts.length) throw error;
    if (remaining.length > 0) throw new ApplyConflictError(remaining);
    result = serverSideApply(live, applied, { ...options, force: true });
  }
  // serverSideApply returns a copy of its own: the annotation is set in place.
  return withLastApplied(result, applied);
}
