// Lifecycle controllers: namespace termination and default ServiceAccounts, CRD cleanup on
// deletion, and ClusterRole aggregation (as kube-controller-manager does them).
import type { Logger } from 'pino';
import {
  aggregatedRulesOf,
  aggregationSelects,
  labelsOf,
  type LabelPredicate,
} from '../auth/index.js';
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { crdCleanupFinalizer, storageVersionOf } from '../resources/crds.js';
import { ApiError } from '../api/errors.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import { storageKey } from '../resources/registry.js';
import type { ChangeEvent } from '../storage/types.js';
import { splitStorageKey } from './garbage-collector.js';
import { WorkQueue } from './queue.js';

function metadataOf(object: JsonObject): JsonObject {
  return object['metadata'] as JsonObject;
}

function tolerate(action: () => unknown): void {
  try {
    action();
  } catch (error) {
    if (
      error instanceof ApiError &&
      (error.reason === 'NotFound' ||
        error.reason === 'AlreadyExists' ||
        error.reason === 'Conflict')
    )
      return;
    throw error;
  }
}

/** Namespace lifecycle: default ServiceAccount, content removal and the `kubernetes` finalizer. */
export class NamespaceController {
  private readonly queue: WorkQueue;

  constructor(
    private readonly core: ApiCore,
    logger: Logger,
  ) {
    this.queue = new WorkQueue('namespace', (name) => this.reconcile(name), logger);
  }

  /** Starts following changes; returns the stop function. */
  start(): () => void {
    for (const ns of this.core.store.list('namespaces'))
      this.queue.add(text(metadataOf(ns)['name']));
    const unsubscribe = this.core.store.subscribe((event: ChangeEvent) => {
      if (event.key === 'namespaces' && event.type !== 'DELETED') this.queue.add(event.name);
      else if (
        event.namespace !== '' &&
        (event.type === 'DELETED' || event.key === 'serviceaccounts')
      ) {
        const ns = this.core.store.get('namespaces', '', event.namespace);
        if (
          ns &&
          (metadataOf(ns)['deletionTimestamp'] !== undefined || event.key === 'serviceaccounts')
        )
          this.queue.add(event.namespace);
      }
    });
    return () => {
      unsubscribe();
      this.queue.stop();
    };
  }

  private reconcile(name: string): void {
    const ns = this.core.store.get('namespaces', '', name);
    if (!ns) return;
    if (metadataOf(ns)['deletionTimestamp'] === undefined) {
      if (!this.core.store.get('serviceaccounts', name, 'default')) {
        const type = this.core.typeOf('', 'serviceaccounts');
        tolerate(() =>
          this.core.create(
            type,
            name,
            {
              apiVersion: 'v1',
              kind: 'ServiceAccount',
              metadata: { name: 'default', namespace: name },
            },
            systemWrite('service-account-controller'),
          ),
        );
      }
      return;
    }
    let remaining = 0;
    for (const key of this.core.store.keys()) {
      const { group, resource } = splitStorageKey(key);
      let type;
      try {
        type = this.core.typeOf(group, resource);
      } catch {
        continue;
      }
      if (!type.namespaced) continue;
      for (const object of this.core.store.list(key, name)) {
        remaining++;
        if (metadataOf(object)['deletionTimestamp'] !== undefined) continue;
        tolerate(() =>
          this.core.delete(type, name, text(metadataOf(object)['name']), {
            propagationPolicy: 'Background',
            dryRun: false,
          }),
        );
      }
    }
    if (remaining > 0) {
      // Deleting content emits events that requeue us; objects held by finalizers keep it waiting.
      return;
    }
    const spec = isJsonObject(ns['spec']) ? ns['spec'] : {};
    const finalizers = Array.isArray(spec['finalizers']) ? spec['finalizers'] : [];
    if (finalizers.includes('kubernetes')) {
      const type = this.core.typeOf('', 'namespaces');
      const body: JsonObject = {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
        spec: { finalizers: finalizers.filter((f) => f !== 'kubernetes') },
      };
      tolerate(() =>
        this.core.update(type, '', name, body, systemWrite('namespace-controller'), 'finalize'),
      );
    }
  }
}

/** Removes a deleted CRD's objects, then lets the CRD go and stops serving it. */
export class CrdCleanupController {
  private readonly queue: WorkQueue;

  constructor(
    private readonly core: ApiCore,
    logger: Logger,
  ) {
    this.queue = new WorkQueue('crd-cleanup', (name) => this.reconcile(name), logger);
  }

  /** Starts following changes; returns the stop function. */
  start(): () => void {
    const crdKey = storageKey('apiextensions.k8s.io', 'customresourcedefinitions');
    for (const crd of this.core.store.list(crdKey)) this.queue.add(text(metadataOf(crd)['name']));
    const unsubscribe = this.core.store.subscribe((event) => {
      if (event.key === crdKey) {
        if (event.type === 'DELETED') this.core.registry.removeCrd(event.name);
        else this.queue.add(event.name);
      } else if (event.type === 'DELETED') {
        const { group, resource } = splitStorageKey(event.key);
        const crdName = `${resource}.${group}`;
        if (group !== '' && this.core.store.get(crdKey, '', crdName)) this.queue.add(crdName);
      }
    });
    return () => {
      unsubscribe();
      this.queue.stop();
    };
  }

  private reconcile(name: string): void {
    const crdKey = storageKey('apiextensions.k8s.io', 'customresourcedefinitions');
    const crd = this.core.store.get(crdKey, '', name);
    if (!crd || metadataOf(crd)['deletionTimestamp'] === undefined) return;
    const spec = isJsonObject(crd['spec']) ? crd['spec'] : {};
    const names = isJsonObject(spec['names']) ? spec['names'] : {};
    const group = text(spec['group'] ?? '');
    const plural = text(names['plural'] ?? '');
    const key = storageKey(group, plural);
    const version = storageVersionOf(crd);
    const type = this.core.registry.get(group, version, plural);
    const objects = this.core.store.list(key);
    if (type) {
      for (const object of objects) {
        if (metadataOf(object)['deletionTimestamp'] !== undefined) continue;
        tolerate(() =>
          this.core.delete(
            type,
            text(metadataOf(object)['namespace'] ?? ''),
            text(metadataOf(object)['name']),
            { propagationPolicy: 'Background', dryRun: false },
          ),
        );
      }
    }
    if (this.core.store.count(key) > 0) return;
    this.core.removeFinalizer(
      this.core.typeOf('apiextensions.k8s.io', 'customresourcedefinitions'),
      '',
      name,
      crdCleanupFinalizer,
    );
  }
}

/**
 * Keeps the rules of ClusterRoles with an aggregationRule equal to the union of the selected
 * roles' rules. As kube's controller, it syncs one aggregated role at a time: a ClusterRole
 * change queues the aggregated roles whose selectors match its labels before or after the change
 * (and itself, if it aggregates); nested aggregation converges through the resulting updates.
 */
export class ClusterRoleAggregationController {
  private readonly queue: WorkQueue;
  private readonly key = storageKey('rbac.authorization.k8s.io', 'clusterroles');
  /** Labels of every ClusterRole as last seen, to know which aggregations a change leaves. */
  private readonly labels = new Map<string, Readonly<Record<string, string>>>();
  /** What each aggregated role selects, by its name. */
  private readonly aggregations = new Map<string, LabelPredicate>();

  constructor(
    private readonly core: ApiCore,
    logger: Logger,
  ) {
    this.queue = new WorkQueue('clusterrole-aggregation', (name) => this.reconcile(name), logger);
  }

  /** Starts following changes; returns the stop function. */
  start(): () => void {
    for (const role of this.core.store.list(this.key)) {
      const name = text(metadataOf(role)['name']);
      this.remember(name, role);
      if (this.aggregations.has(name)) this.queue.add(name);
    }
    const unsubscribe = this.core.store.subscribe((event) => {
      if (event.key !== this.key) return;
      const before = this.labels.get(event.name);
      const after = event.type === 'DELETED' ? undefined : labelsOf(event.object);
      if (event.type === 'DELETED') this.forget(event.name);
      else this.remember(event.name, event.object);
      if (this.aggregations.has(event.name)) this.queue.add(event.name);
      for (const [name, selects] of this.aggregations) {
        if (name === event.name) continue;
        if ((before !== undefined && selects(before)) || (after !== undefined && selects(after)))
          this.queue.add(name);
      }
    });
    return () => {
      unsubscribe();
      this.queue.stop();
    };
  }

  private remember(name: string, role: JsonObject): void {
    this.labels.set(name, labelsOf(role));
    const selects = aggregationSelects(role);
    if (selects === undefined) this.aggregations.delete(name);
    else this.aggregations.set(name, selects);
  }

  private forget(name: string): void {
    this.labels.delete(name);
    this.aggregations.delete(name);
  }

  private reconcile(name: string): void {
    const current = this.core.store.get(this.key, '', name);
    if (current === undefined) return;
    const rules = aggregatedRulesOf(current, this.core.store.list(this.key));
    if (rules === undefined || jsonEqual(current['rules'] ?? [], rules)) return;
    const copy = structuredClone(current);
    copy['rules'] = rules;
    const type = this.core.typeOf('rbac.authorization.k8s.io', 'clusterroles');
    tolerate(() =>
      this.core.update(type, '', name, copy, systemWrite('clusterrole-aggregation-controller')),
    );
  }
}

/** Secret type of legacy ServiceAccount token secrets. */
export const serviceAccountTokenType = 'kubernetes.io/service-account-token';

/** Fills legacy ServiceAccount token secrets (type kubernetes.io/service-account-token), as kube's token controller does. */
export class TokenSecretController {
  private readonly queue: WorkQueue;

  constructor(
    private readonly core: ApiCore,
    logger: Logger,
    private readonly issue: (namespace: string, name: string, uid: string) => string,
    private readonly caCertPem: string,
  ) {
    this.queue = new WorkQueue('token-secrets', (key) => this.reconcile(key), logger);
  }

  /** Starts following changes; returns the stop function. */
  start(): () => void {
    for (const secret of this.core.store.list('secrets')) {
      if (secret['type'] === serviceAccountTokenType)
        this.queue.add(
          `${text(metadataOf(secret)['namespace'])}/${text(metadataOf(secret)['name'])}`,
        );
    }
    const unsubscribe = this.core.store.subscribe((event) => {
      if (
        event.key === 'secrets' &&
        event.type !== 'DELETED' &&
        event.object['type'] === serviceAccountTokenType
      ) {
        this.queue.add(`${event.namespace}/${event.name}`);
      }
    });
    return () => {
      unsubscribe();
      this.queue.stop();
    };
  }

  private reconcile(key: string): void {
    const [namespace = '', name = ''] = key.split('/');
    const secret = this.core.store.get('secrets', namespace, name);
    if (!secret || metadataOf(secret)['deletionTimestamp'] !== undefined) return;
    const annotations = isJsonObject(metadataOf(secret)['annotations'])
      ? (metadataOf(secret)['annotations'] as JsonObject)
      : {};
    const accountName = text(annotations['kubernetes.io/service-account.name']);
    const account = this.core.store.get('serviceaccounts', namespace, accountName);
    const type = this.core.typeOf('', 'secrets');
    if (!account) {
      // A token secret for a missing account is removed, as kube's token controller does.
      tolerate(() => this.core.delete(type, namespace, name, { dryRun: false }));
      return;
    }
    const uid = text(metadataOf(account)['uid']);
    const data = isJsonObject(secret['data']) ? secret['data'] : {};
    if (
      typeof data['token'] === 'string' &&
      annotations['kubernetes.io/service-account.uid'] === uid
    )
      return;
    const copy = structuredClone(secret);
    const b64 = (value: string): string => Buffer.from(value).toString('base64');
    copy['data'] = {
      ...data,
      token: b64(this.issue(namespace, accountName, uid)),
      'ca.crt': b64(this.caCertPem),
      namespace: b64(namespace),
    };
    metadataOf(copy)['annotations'] = { ...annotations, 'kubernetes.io/service-account.uid': uid };
    tolerate(() => this.core.update(type, namespace, name, copy, systemWrite('token-controller')));
  }
}
