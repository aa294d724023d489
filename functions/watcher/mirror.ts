// Mirrors one cluster's objects into the olmq_objects KV bucket: every add/update is a put,
// every deletion a delete marker, published with a message id derived from uid and
// resourceVersion so a replayed event is dropped by JetStream's de-duplication. After each
// (re)list the mirror converges: keys of objects that vanished meanwhile are deleted.
import { headers as natsHeaders } from '@nats-io/transport-node';
import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type ObjectCache,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { assets, type Backbone } from '../../shared/bus/backbone.js';
import { objectKey } from '../../shared/bus/subjects.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { MirroredKind } from './kinds.js';

/** What the mirror of one cluster needs. */
export interface MirrorContext {
  cluster: string;
  kubeConfig: KubeConfig;
  client: KubeClient;
  backbone: Backbone;
  log: Logger;
  /** Counts published changes by kind and operation (put, delete). */
  published: Counter<'cluster' | 'kind' | 'operation'>;
}

/** A running mirror of one kind. */
export interface KindMirror {
  kind: MirroredKind;
  /** Resolves once the first list is mirrored and stale keys are removed. */
  synced: Promise<void>;
  stop(): void;
}

function keyOf(cluster: string, kind: string, object: KubeObject): string {
  return objectKey({
    cluster,
    kind,
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name ?? '',
  });
}

/** Starts mirroring one kind; restarts its informer after errors until stopped. */
export function mirrorKind(context: MirrorContext, kind: MirroredKind): KindMirror {
  const { cluster, backbone, log } = context;
  const subjectOf = (object: KubeObject): string =>
    `$KV.${assets.objects}.${keyOf(cluster, kind.kind, object)}`;
  let stopped = false;
  let informer: (Informer<KubeObject> & ObjectCache<KubeObject>) | undefined;
  let restartTimer: NodeJS.Timeout | undefined;

  const put = (object: KubeObject): void => {
    const trimmed = kind.trim({ ...object, apiVersion: kind.apiVersion, kind: kind.kind });
    const id = `${object.metadata.uid ?? ''}@${object.metadata.resourceVersion ?? ''}`;
    backbone.js.publish(subjectOf(object), JSON.stringify(trimmed), { msgID: id }).then(
      () => context.published.inc({ cluster, kind: kind.kind, operation: 'put' }),
      (error: unknown) =>
        log.error({ err: error, kind: kind.kind, name: object.metadata.name }, 'mirror put failed'),
    );
  };
  const remove = (object: KubeObject): void => {
    const h = natsHeaders();
    h.set('KV-Operation', 'DEL');
    backbone.js
      .publish(subjectOf(object), undefined, {
        headers: h,
        msgID: `${object.metadata.uid ?? ''}@deleted`,
      })
      .then(
        () => context.published.inc({ cluster, kind: kind.kind, operation: 'delete' }),
        (error: unknown) =>
          log.error(
            { err: error, kind: kind.kind, name: object.metadata.name },
            'mirror delete failed',
          ),
      );
  };

  // Deletes mirror keys of this kind whose object is not in the informer's cache.
  const converge = async (cache: ObjectCache<KubeObject>): Promise<void> => {
    const live = new Set(cache.list().map((o) => keyOf(cluster, kind.kind, o)));
    const prefix = objectKey({ cluster, kind: kind.kind, namespace: '-', name: 'x' })
      .split('.')
      .slice(0, 2)
      .join('.');
    const stale: string[] = [];
    for await (const key of await backbone.objects.keys(`${prefix}.>`)) {
      if (!live.has(key)) stale.push(key);
    }
    await Promise.all(stale.map((key) => backbone.objects.delete(key)));
    if (stale.length > 0)
      log.info(
        { kind: kind.kind, removed: stale.length },
        'mirror converged: removed vanished objects',
      );
  };

  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));

  const start = (): void => {
    const path = context.client.pathOf({ apiVersion: kind.apiVersion, kind: kind.kind });
    void path.then(
      (collection) => {
        if (stopped) return;
        const list = async () => {
          const result = await context.client.list(
            { apiVersion: kind.apiVersion, kind: kind.kind },
            kind.labelSelector === undefined ? {} : { labelSelector: kind.labelSelector },
          );
          return {
            apiVersion: 'v1',
            kind: 'List',
            items: result.items,
            metadata: { resourceVersion: result.resourceVersion },
          };
        };
        const current = makeInformer<KubeObject>(
          context.kubeConfig,
          collection,
          list,
          kind.labelSelector,
        );
        informer = current;
        current.on('add', put);
        current.on('update', put);
        current.on('delete', remove);
        // start() resolves once the list is mirrored and the watch runs; then sweep leftovers.
        // (Re-lists after a 410 inside the informer emit deletions for vanished objects.)
        const run = async (): Promise<void> => {
          await current.start();
          await converge(current);
          markSynced();
        };
        current.on('error', (error: unknown) => {
          if (stopped) return;
          log.warn({ err: error, kind: kind.kind }, 'watch failed; restarting the informer');
          restartTimer = setTimeout(() => void run().catch(() => undefined), 1_000);
        });
        run().catch((error: unknown) =>
          log.warn({ err: error, kind: kind.kind }, 'informer start failed'),
        );
      },
      (error: unknown) => {
        log.warn({ err: error, kind: kind.kind }, 'kind not served yet; retrying');
        if (!stopped) restartTimer = setTimeout(start, 2_000);
      },
    );
  };
  start();

  return {
    kind,
    synced,
    stop() {
      stopped = true;
      clearTimeout(restartTimer);
      void informer?.stop();
    },
  };
}
