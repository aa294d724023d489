// core/v1 Events as client-go's recorder writes them, made idempotent: an Event's name is derived
// from what the recorder aggregates on (source, involved object, type, reason, message), so a
// repeat of the same Event — a retried reconcile, or the same transition again later — counts up
// (count, lastTimestamp) on one object instead of adding another, as the recorder's correlator does.
import { createHash } from 'node:crypto';
import type { KubeClient, KubeObject } from './client.js';
import { isAlreadyExists, isConflict } from './errors.js';
import { kubeTime } from './time.js';

/** Upstream OLM's event source component (both its operators record under this name). */
export const olmEventComponent = 'operator-lifecycle-manager';

/** The object an Event is about (an ObjectReference). */
export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  /** A part of the object, e.g. "status.plan[2]". */
  fieldPath?: string | undefined;
}

/** What an Event says. */
export interface EventContent {
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. "InstallSucceeded". */
  reason: string;
  message: string;
}

/** Longest object name the API accepts (a DNS subdomain). */
const maxNameLength = 253;

/** The deterministic name of the Event `content` about `involved` from `component`. */
export function eventName(
  involved: InvolvedObject,
  content: EventContent,
  component = olmEventComponent,
): string {
  const key = JSON.stringify([
    component,
    involved.kind,
    involved.namespace ?? '',
    involved.name,
    involved.fieldPath ?? '',
    involved.uid ?? '',
    involved.apiVersion,
    content.type,
    content.reason,
    content.message,
  ]);
  const suffix = createHash('sha256').update(key).digest('hex').slice(0, 16);
  // client-go names Events "<object>.<hex>"; the hex part here is a digest instead of a time.
  return `${involved.name.slice(0, maxNameLength - suffix.length - 1)}.${suffix}`;
}

/** A core/v1 Event (count 1) about `involved`, in its namespace ("default" for cluster objects). */
export function coreEvent(
  involved: InvolvedObject,
  content: EventContent,
  at: Date,
  component = olmEventComponent,
): KubeObject {
  const time = kubeTime(at);
  const reference: Record<string, string> = {
    apiVersion: involved.apiVersion,
    kind: involved.kind,
    name: involved.name,
  };
  if (involved.namespace) reference['namespace'] = involved.namespace;
  if (involved.uid) reference['uid'] = involved.uid;
  if (involved.resourceVersion) reference['resourceVersion'] = involved.resourceVersion;
  if (involved.fieldPath) reference['fieldPath'] = involved.fieldPath;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: eventName(involved, content, component),
      namespace: involved.namespace || 'default',
    },
    involvedObject: reference,
    reason: content.reason,
    message: content.message,
    type: content.type,
    source: { component },
    reportingComponent: component,
    reportingInstance: '',
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}

/** How many times a repeat re-reads the Event when someone else counted it meanwhile. */
const maxConflictRetries = 3;

/**
 * Records `event` (from coreEvent): creates it, or — when an Event of that name exists, i.e. the
 * same Event was recorded before — increments its count and moves its lastTimestamp.
 */
export async function recordEvent(
  client: KubeClient,
  event: KubeObject,
  fieldManager?: string,
): Promise<void> {
  const query = fieldManager === undefined ? {} : { fieldManager };
  const ref = {
    apiVersion: 'v1',
    kind: 'Event',
    namespace: event.metadata.namespace,
    name: event.metadata.name,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      await client.create(event, query);
      return;
    } catch (error) {
      if (!isAlreadyExists(error) || attempt > maxConflictRetries) throw error;
    }
    const existing = await client.get(ref);
    if (existing === undefined) continue; // expired meanwhile: create it again
    try {
      await client.update(
        {
          ...existing,
          count: (typeof existing['count'] === 'number' ? existing['count'] : 1) + 1,
          lastTimestamp: event['lastTimestamp'],
        },
        query,
      );
      return;
    } catch (error) {
      if (!isConflict(error) || attempt >= maxConflictRetries) throw error;
    }
  }
}
