// Mirrors one cluster's objects into the olmq_objects KV bucket: every add/update is a put,
// every deletion a delete marker, published with a message id derived from uid and
// resourceVersion so a replayed event is dropped by JetStream's de-duplication. After each
// (re)list the mirror converges: keys of objects that vanished meanwhile are deleted. Beside
// the objects it keeps the names of each namespace's objects (./name-index.ts).
//
// Every write carries the watcher term's Lease epoch (shared/bus/fencing.ts), in its header and
// in its message id (so a new term's first puts are never dropped as duplicates of a deposed
// term's), and none is sent once the term's lease is past its renew deadline on our clock.
//
// An object larger than the max payload is uploaded in chunks first and its entry holds a
// reference (shared/bus/large-values.ts); the upload runs beside the pipeline, so other keys go
// on, and later changes of the same key wait for it (the mirror must not regress).
import { epochHeaders } from '../shared/bus/fencing.js';
import {
  bodyHeader,
  dropBodies,
  encodeBodyRef,
  inlineLimit,
  storeBody,
  type BodyRef,
} from '../shared/bus/large-values.js';
import { mirroredBodyRef, mirroredKeys } from '../shared/bus/mirror-read.js';
import { partsHeader, serializeByParts } from '../shared/bus/object-parts.js';
import { assets, mirrorSubject, objectKey, parseBodySubject } from '../shared/bus/subjects.js';
import type { KubeObject } from '../shared/kube/client.js';
import { Informer } from '../shared/kube/informer.js';
import type { MirroredKind } from './kinds.js';
import { NameIndex } from './name-index.js';
import { defaultMaxInFlight, PublishWindow } from './publish-window.js';
import type { KindMirror, MirrorContext } from './types.js';

function keyOf(cluster: string, kind: string, object: KubeObject): string {
  return objectKey({
    cluster,
    kind,
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name ?? '',
  });
}

/** What the mirror's informers keep of an object: what they compare and name it by. */
function namesAndVersions(object: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion } = object.metadata;
  const metadata = Object.fromEntries(
    Object.entries({ name, namespace, uid, resourceVersion }).filter(([, v]) => v !== undefined),
  );
  return { apiVersion: object.apiVersion, kind: object.kind, metadata };
}

/** Starts mirroring one kind; restarts its informer after errors until stopped. */
export function mirrorKind(context: MirrorContext, kind: MirroredKind): KindMirror {
  const { cluster, backbone, log } = context;
  const subjectOf = (object: KubeObject): string =>
    mirrorSubject(keyOf(cluster, kind.kind, object));
  let stopped = false;
  let informer: Informer | undefined;
  let restartTimer: NodeJS.Timeout | undefined;

  // Publishes are pipelined on one connection (so they land in event order), at most
  // maxInFlight unacknowledged (./publish-window.ts). A failed one (NATS down or restarting) is
  // remembered as the key's latest intent and retried until it lands; an older failure never
  // overwrites a newer intent, so the mirror cannot regress.
  // Each put carries the signature of the object's parts (object-parts.ts), retries too: it
  // describes the content, not a change.
  // An intent holds the trimmed JSON to send and only the names and versions of the object:
  // while thousands of changes wait, the whole objects they came from are garbage already.
  type Intent = {
    operation: 'put' | 'delete';
    object: KubeObject;
    seq: number;
    /** A deletion the informer saw: its name leaves the name index once it is sent. */
    unindex?: true;
    json?: string;
    /** The JSON is larger than a publish may carry: it goes by reference. */
    large?: boolean;
    signature?: string;
    /** Sent again: after a failed publish, after its name index entry failed, or over a fenced write. */
    retry?: '#retry' | '#indexed' | '#resync' | `#repair${number}`;
  };
  let seq = 0;
  const latest = new Map<string, Intent>();
  const pending = new Map<string, Intent>();
  let retryTimer: NodeJS.Timeout | undefined;
  let retryDelayMs = 100;
  let lastError: string | undefined;
  // Keys with an upload in flight, and the newest change of each waiting for it.
  const uploading = new Set<string>();
  const deferred = new Map<string, Intent>();
  // Keys whose last landed entry is a reference: their uploads go once a later change lands.
  const referenced = new Set<string>();

  const putMessage = (intent: Intent, body: string | undefined, ref?: BodyRef) => {
    const { uid = '', resourceVersion = '' } = intent.object.metadata;
    const h = epochHeaders(context.epoch);
    if (intent.signature !== undefined) h.set(partsHeader, intent.signature);
    if (ref !== undefined) h.set(bodyHeader, '1');
    return backbone.pipe.publish(subjectOf(intent.object), body, {
      msgID: `${uid}@${resourceVersion}#e${context.epoch}${intent.retry ?? ''}`,
      headers: h,
    });
  };
  // Uploads the object, then puts the reference (unless a newer change came meanwhile).
  const upload = async (intent: Intent): Promise<'landed' | 'superseded'> => {
    const key = keyOf(cluster, kind.kind, intent.object);
    const subject = mirrorSubject(key);
    const ref = await storeBody(backbone, key, new TextEncoder().encode(intent.json ?? ''));
    if (latest.get(subject)?.seq !== intent.seq) {
      await dropUpload(ref);
      return 'superseded';
    }
    const ack = await putMessage(intent, encodeBodyRef(ref), ref);
    // A duplicate (a replay within JetStream's window) stored nothing: the entry keeps its
    // earlier reference, and this upload is garbage.
    if (ack.duplicate) await dropUpload(ref);
    else {
      referenced.add(subject);
      await dropBodies(backbone, key, ref);
    }
    return 'landed';
  };
  const dropUpload = (ref: BodyRef): Promise<unknown> =>
    backbone.jsm.streams.purge(assets.bodyStream, { filter: ref.subject }).catch(() => undefined);

  let outOfTerm = false;
  const dispatch = (subject: string, intent: Intent): Promise<unknown> | undefined => {
    // Past the renew deadline (a pause, a partition): a standby may lead by now. Nothing more is
    // written; the term ends at its next renewal check and the next one lists everything anew.
    if (!context.current()) {
      if (!outOfTerm)
        log.warn({ kind: kind.kind }, 'lease not renewed in time; mirror writes stop');
      outOfTerm = true;
      return undefined;
    }
    if (uploading.has(subject)) {
      deferred.set(subject, intent);
      return undefined;
    }
    const { uid = '' } = intent.object.metadata;
    const retry = intent.retry ?? '';
    let published: Promise<unknown>;
    if (intent.operation === 'put' && intent.large === true) {
      uploading.add(subject);
      published = upload(intent).finally(() => {
        uploading.delete(subject);
        const next = deferred.get(subject);
        deferred.delete(subject);
        if (next !== undefined && !stopped) send(next);
      });
    } else if (intent.operation === 'put') {
      published = putMessage(intent, intent.json);
    } else {
      const h = epochHeaders(context.epoch);
      h.set('KV-Operation', 'DEL');
      published = backbone.pipe.publish(subject, undefined, {
        headers: h,
        msgID: `${uid}@deleted#e${context.epoch}${retry}`,
      });
      // After the deletion, through the same pipe: a listed name always has its object.
      if (intent.unindex === true)
        index.remove(intent.object.metadata.namespace ?? '', intent.object.metadata.name ?? '');
    }
    published.then(
      (outcome) => {
        if (outcome === 'superseded') return;
        if (intent.large !== true && referenced.delete(subject))
          void dropBodies(backbone, keyOf(cluster, kind.kind, intent.object));
        context.published.inc({ cluster, kind: kind.kind, operation: intent.operation });
        if (latest.get(subject)?.seq === intent.seq) latest.delete(subject);
        if (pending.get(subject)?.seq === intent.seq) pending.delete(subject);
        retryDelayMs = 100;
      },
      (error: unknown) => {
        if (stopped) return;
        const newest = latest.get(subject);
        if (newest === undefined || newest.seq < intent.seq) return; // the key moved on and landed
        pending.set(subject, { ...newest, retry: '#retry' });
        lastError = error instanceof Error ? error.message : String(error);
        log.warn(
          { err: error, kind: kind.kind, name: intent.object.metadata.name, pending: pending.size },
          'mirror publish failed; will retry',
        );
        scheduleRetry();
      },
    );
    return published;
  };
  const window = new PublishWindow<Intent>(context.maxInFlight ?? defaultMaxInFlight, dispatch);
  const send = (intent: Intent): void => window.submit(subjectOf(intent.object), intent);
  const scheduleRetry = (): void => {
    if (retryTimer !== undefined || stopped) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      retryDelayMs = Math.min(retryDelayMs * 2, 5_000);
      for (const intent of pending.values()) send(intent);
    }, retryDelayMs);
  };
  const publish = (
    operation: Intent['operation'],
    object: KubeObject,
    retry?: Intent['retry'],
    unindex = false,
  ): void => {
    const subject = subjectOf(object);
    const intent: Intent = {
      operation,
      object: namesAndVersions(object),
      seq: ++seq,
      ...(retry && { retry }),
      ...(unindex && { unindex }),
    };
    if (operation === 'put') {
      const trimmed = kind.trim({ ...object, apiVersion: kind.apiVersion, kind: kind.kind });
      const { json, signature } = serializeByParts(trimmed);
      intent.json = json;
      intent.signature = signature;
      if (Buffer.byteLength(json) > inlineLimit(backbone)) intent.large = true;
    }
    latest.set(subject, intent);
    // This intent supersedes a failed one waiting for its retry (which must not follow it).
    pending.delete(subject);
    send(intent);
  };
  // The informer keeps only the names and versions of objects (a cluster's CSV copies alone
  // would be gigabytes): an object published again (the name index or the mirror lost it, or a
  // deposed watcher wrote it) is read again from the API, unless the informer moved on during
  // the read (its own, newer publish then stands). A failed read is logged and 'failed'.
  // One read at a time per object: a resync, a repair and a re-announcement asking together
  // share it rather than each publishing the same version.
  const rereads = new Map<string, Promise<'published' | 'moved' | 'failed'>>();
  let resyncing = false;
  const publishAgain = (
    namespace: string,
    name: string,
    retry: NonNullable<Intent['retry']>,
  ): Promise<'published' | 'moved' | 'failed'> => {
    const subject = subjectOf(goneObject(namespace, name));
    let reread = rereads.get(subject);
    if (reread === undefined) {
      reread = readAndPublish(namespace, name, retry).finally(() => rereads.delete(subject));
      rereads.set(subject, reread);
    }
    return reread;
  };
  const readAndPublish = async (
    namespace: string,
    name: string,
    retry: NonNullable<Intent['retry']>,
  ): Promise<'published' | 'moved' | 'failed'> => {
    const before = informer?.get(namespace, name)?.metadata.resourceVersion;
    let object: KubeObject | undefined;
    try {
      object = await context.client.get({
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        namespace,
        name,
      });
    } catch (error) {
      log.warn({ err: error, kind: kind.kind, namespace, name }, 'could not read an object again');
      return 'failed';
    }
    if (stopped || informer?.get(namespace, name)?.metadata.resourceVersion !== before)
      return 'moved';
    if (object !== undefined) publish('put', object, retry);
    else publish('delete', goneObject(namespace, name), retry);
    return 'published';
  };
  const index = new NameIndex({
    cluster,
    kind: kind.kind,
    backbone,
    epoch: context.epoch,
    current: context.current,
    log,
    reannounce(namespace, name) {
      if (informer?.get(namespace, name) !== undefined)
        void publishAgain(namespace, name, '#indexed');
    },
  });
  const goneObject = (namespace: string, name: string): KubeObject => ({
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    metadata: { namespace, name },
  });
  const put = (object: KubeObject): void => {
    index.add(object.metadata.namespace ?? '', object.metadata.name ?? '');
    publish('put', object);
  };
  const remove = (object: KubeObject): void => publish('delete', object, undefined, true);

  // Deletes mirror keys of this kind whose object is not in the informer's cache, and names
  // of such objects from the index. With `republish` (a resync) objects whose key is missing
  // from the mirror (lost there) are published again; the rest is already current.
  const converge = async (cache: Informer, republish = false): Promise<void> => {
    const objects = cache.list();
    const live = new Map(objects.map((o) => [keyOf(cluster, kind.kind, o), o]));
    const prefix = objectKey({ cluster, kind: kind.kind, namespace: '-', name: 'x' })
      .split('.')
      .slice(0, 2)
      .join('.');
    const stale: string[] = [];
    const mirrored = new Set<string>();
    for (const key of await mirroredKeys(backbone, `${prefix}.>`)) {
      mirrored.add(key);
      if (!live.has(key)) stale.push(key);
    }
    if (stale.length > 0 && !context.current()) return;
    await Promise.all(
      stale.map(async (key) => {
        const h = epochHeaders(context.epoch);
        h.set('KV-Operation', 'DEL');
        await backbone.pipe.publish(mirrorSubject(key), undefined, { headers: h });
        await dropBodies(backbone, key);
      }),
    );
    await sweepUploads(prefix);
    if (republish) {
      let missing = 0;
      for (const [key, kept] of live) {
        if (mirrored.has(key) || latest.has(subjectOf(kept))) continue;
        const { namespace = '', name = '' } = kept.metadata;
        if ((await publishAgain(namespace, name, '#resync')) === 'published') missing++;
      }
      if (missing > 0)
        log.info(
          { kind: kind.kind, republished: missing },
          'resync: republished objects missing from the mirror',
        );
    }
    // Deletions still waiting to be sent keep their names until they are (see dispatch).
    const leaving = [...window.waiting(), ...deferred.values()]
      .filter((i) => i.unindex === true)
      .map((i) => i.object);
    index.converge(
      [...objects, ...leaving].map((o) => ({
        namespace: o.metadata.namespace ?? '',
        name: o.metadata.name ?? '',
      })),
    );
    if (stale.length > 0)
      log.info(
        { kind: kind.kind, removed: stale.length },
        'mirror converged: removed vanished objects',
      );
  };

  // Purges uploads of this kind that no entry references (a watcher stopped between an upload
  // and its reference, or between an overwrite and the purge), except those in flight here.
  const sweepUploads = async (prefix: string): Promise<void> => {
    const info = await backbone.jsm.streams.info(assets.bodyStream, {
      subjects_filter: `olmq.body.${prefix}.>`,
    });
    const orphans: string[] = [];
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const { key } = parseBodySubject(subject);
      if (uploading.has(mirrorSubject(key))) continue;
      const live = await mirroredBodyRef(backbone, key);
      if (uploading.has(mirrorSubject(key))) continue;
      if (live?.subject !== subject) orphans.push(subject);
      // Referenced (by an entry a previous watcher wrote): purged once a later change lands.
      else referenced.add(mirrorSubject(key));
    }
    for (const subject of orphans)
      await backbone.jsm.streams.purge(assets.bodyStream, { filter: subject });
    if (orphans.length > 0)
      log.info({ kind: kind.kind, purged: orphans.length }, 'mirror swept unreferenced uploads');
  };

  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));

  let indexOpened: Promise<void> | undefined;
  const start = (): void => {
    indexOpened ??= index.open().catch((error: unknown) => {
      indexOpened = undefined;
      throw error;
    });
    const ready = Promise.all([
      context.client.pathOf({ apiVersion: kind.apiVersion, kind: kind.kind }),
      indexOpened,
    ]);
    void ready.then(
      () => {
        if (stopped) return;
        // start() resolves once the list is mirrored and the watch runs; then sweep leftovers.
        // (Re-lists after a 410 inside the informer emit deletions for vanished objects.)
        // The informer reports a failed list (e.g. Forbidden) as an error event, not as a
        // rejected start(): only a start without one counts as synced.
        let failures = 0;
        const onError = (error: unknown): void => {
          failures++;
          if (stopped) return;
          log.warn({ err: error, kind: kind.kind }, 'watch failed; restarting the informer');
          restartTimer = setTimeout(() => void run().catch(() => undefined), 1_000);
        };
        const counted = (event: string): void =>
          context.watchEvents?.inc({ cluster, kind: kind.kind, event });
        const current: Informer = new Informer(
          context.client,
          { apiVersion: kind.apiVersion, kind: kind.kind },
          {
            add: put,
            update: put,
            delete: remove,
            error: onError,
            stalled: () => {
              counted('stalled');
              log.warn({ kind: kind.kind }, 'watch stalled (no event or bookmark); resuming it');
            },
            resynced: () => {
              counted('resync');
              // A resync while the last one still converges is left to the next: both would
              // find the same keys missing and publish them twice.
              if (resyncing) return;
              resyncing = true;
              converge(current, true)
                .catch((error: unknown) =>
                  log.warn({ err: error, kind: kind.kind }, 'resync could not converge the mirror'),
                )
                .finally(() => (resyncing = false));
            },
          },
          {
            ...(kind.labelSelector === undefined ? {} : { labelSelector: kind.labelSelector }),
            ...(context.stallTimeoutMs === undefined
              ? {}
              : { stallTimeoutMs: context.stallTimeoutMs }),
            ...(context.resyncMs === undefined ? {} : { resyncMs: context.resyncMs }),
            keep: namesAndVersions,
          },
        );
        informer = current;
        const run = async (): Promise<void> => {
          if (stopped) return;
          const before = failures;
          await current.start();
          if (failures !== before) return;
          await converge(current);
          markSynced();
          isSynced = true;
          for (const again of deferredRepairs.splice(0)) again();
        };
        run().catch((error: unknown) =>
          log.warn({ err: error, kind: kind.kind }, 'informer start failed'),
        );
      },
      (error: unknown) => {
        log.warn(
          { err: error, kind: kind.kind },
          'kind not served yet, or its name index unreadable; retrying',
        );
        if (!stopped) restartTimer = setTimeout(start, 2_000);
      },
    );
  };
  start();

  // Repairs wait for the first list: until then the cache cannot tell a vanished object from
  // one not listed yet (and the first list writes every key anyway).
  let isSynced = false;
  const deferredRepairs: (() => void)[] = [];
  const repair = (namespace: string, name: string, seq: number): void => {
    if (!isSynced) {
      deferredRepairs.push(() => repair(namespace, name, seq));
      return;
    }
    if (informer?.get(namespace, name) === undefined) {
      publish('delete', goneObject(namespace, name), `#repair${seq}`);
      return;
    }
    // A fenced key must be written again: readers refuse it until then.
    void publishAgain(namespace, name, `#repair${seq}`).then((outcome) => {
      if (outcome === 'failed' && !stopped)
        setTimeout(() => repair(namespace, name, seq), 1_000).unref();
    });
  };

  return {
    kind,
    synced,
    failing: () => pending.size,
    lastError: () => (pending.size === 0 ? undefined : lastError),
    repair,
    repairNames(namespace) {
      if (!isSynced) deferredRepairs.push(() => index.repair(namespace));
      else index.repair(namespace);
    },
    stop() {
      stopped = true;
      clearTimeout(restartTimer);
      clearTimeout(retryTimer);
      window.stop();
      index.stop();
      informer?.stop();
    },
  };
}
