// The ClusterServiceVersion half of the install function: one work item per namespace (a CSV's
// phase depends on the namespace's OperatorGroups, the CSV it replaces and the one replacing
// it). load reads the namespace from the API, decide is csv-lifecycle.ts, apply writes objects
// then statuses.
import type { KubeClient, KubeObject, ObjectRef } from '../../shared/kube/client.js';
import {
  defaultCertificateLifetimeMs,
  issueServingCertificate,
  reusableCertificate,
  serviceHosts,
  type ServingCertificate,
} from './certificates.js';
import {
  certifiedDeployments,
  existingKey,
  ownedApiServicesOf,
  serviceNameOf,
} from './webhooks.js';
import { KubeApiError, isConflict } from '../../shared/kube/errors.js';
import { executeWrites } from '../../shared/kube/executor.js';
import {
  StaleDecisionError,
  type FunctionDefinition,
  type ObjectChange,
  type Trigger,
  type WorkContext,
} from '../../shared/runtime/function-host.js';
import { getMirrored, type MirrorSource } from '../../shared/bus/mirror-read.js';
import type { WorkKey } from '../../shared/bus/subjects.js';
import {
  crdNamesOf,
  decideNamespace,
  transitioned,
  type CsvNamespaceSnapshot,
  type CsvNamespaceWrites,
  type CsvObject,
} from './csv-lifecycle.js';
import type { InstallMetrics } from './metrics.js';
import {
  mentionsUpgradeable,
  operatorConditionApiVersion,
  type OperatorConditionObject,
} from './operator-conditions.js';
import { installFieldManager } from './plan-function.js';
import { operatorGroupScope, type ScopedClients } from './scope.js';
import { csvPhaseEvent } from './csv-events.js';

const certifiedPhases = new Set(['InstallReady', 'Installing', 'Succeeded', 'Failed']);

/** Certificates and existing objects for CSVs with webhooks or owned APIServices. */
async function loadCertified(
  client: KubeClient,
  namespace: string,
  csvs: readonly CsvObject[],
  at: Date,
  lifetimeMs: number,
): Promise<Pick<CsvNamespaceSnapshot, 'certificates' | 'existing' | 'webhookConfigurations'>> {
  const certificates = new Map<string, Map<string, ServingCertificate>>();
  const existing = new Map<string, KubeObject>();
  const relevant = csvs.filter(
    (c) => certifiedDeployments(c).size > 0 && certifiedPhases.has(c.status?.phase ?? ''),
  );
  if (relevant.length === 0) return { certificates, existing, webhookConfigurations: [] };
  const remember = async (ref: ObjectRef): Promise<KubeObject | undefined> => {
    const object = await client.get(ref);
    if (object !== undefined)
      existing.set(existingKey(ref.kind, ref.namespace, ref.name ?? ''), object);
    return object;
  };
  const rbac = 'rbac.authorization.k8s.io/v1';
  for (const csv of relevant) {
    const perDeployment = new Map<string, ServingCertificate>();
    certificates.set(csv.metadata.name ?? '', perDeployment);
    for (const [deployment, uses] of certifiedDeployments(csv)) {
      const service = serviceNameOf(deployment);
      const secretName = `${service}-cert`;
      const [secret] = await Promise.all([
        remember({ apiVersion: 'v1', kind: 'Secret', namespace, name: secretName }),
        remember({ apiVersion: 'v1', kind: 'Service', namespace, name: service }),
        remember({ apiVersion: rbac, kind: 'Role', namespace, name: secretName }),
        remember({ apiVersion: rbac, kind: 'RoleBinding', namespace, name: secretName }),
        uses.apiservice
          ? remember({
              apiVersion: rbac,
              kind: 'ClusterRoleBinding',
              name: `${service}-system:auth-delegator`,
            })
          : Promise.resolve(undefined),
      ]);
      const hosts = serviceHosts(service, namespace);
      perDeployment.set(
        deployment,
        (await reusableCertificate(secret, hosts, at)) ??
          (await issueServingCertificate(hosts, at, lifetimeMs)),
      );
    }
    for (const api of ownedApiServicesOf(csv)) {
      await remember({
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        name: `${api.version}.${api.group}`,
      });
    }
  }
  const labelSelector = `olm.owner.namespace=${namespace},olm.owner.kind=ClusterServiceVersion`;
  const lists = await Promise.all(
    ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].map((kind) =>
      client.list({ apiVersion: 'admissionregistration.k8s.io/v1', kind }, { labelSelector }),
    ),
  );
  return { certificates, existing, webhookConfigurations: lists.flatMap((l) => l.items) };
}

// Events are best effort, as upstream's recorder: a failure is logged, the pass goes on.
async function recordEvents(
  client: KubeClient,
  events: readonly KubeObject[],
  work: WorkContext,
): Promise<void> {
  // A pass's Events are distinct objects: written side by side.
  await Promise.all(
    events.map(async (event) => {
      try {
        await executeWrites(client, [{ op: 'event', object: event }], installFieldManager);
      } catch (error) {
        work.log.warn({ event: event.metadata.name, err: error }, 'recording an Event failed');
      }
    }),
  );
}

const olm = (kind: string, version = 'v1alpha1') => ({
  apiVersion: `operators.coreos.com/${version}`,
  kind,
});

/** Whether the CSV defines webhooks (conversion webhooks patch its CRDs). */
const servesWebhooks = (csv: CsvObject): boolean =>
  ((csv.spec as { webhookdefinitions?: unknown[] } | undefined)?.webhookdefinitions?.length ?? 0) >
  0;

// Every change in a namespace that can move one of its CSVs.
const namespaceKeys = (c: ObjectChange): WorkKey[] =>
  c.ref.namespace === '' || c.ref.namespace === '-' ? [] : [[c.ref.namespace]];
export const namespaceTrigger = (kind: string): Trigger => ({ kind, workKeys: namespaceKeys });

// A Subscription matters to the CSV it installed (status.installedCSV): its spec.config shapes
// the CSV's deployments. The rest of its status (resolution, planning) starts no work.
const subscriptionTrigger: Trigger = {
  kind: 'Subscription',
  parts: ['metadata', 'spec', 'status.installedCSV'],
  workKeys: namespaceKeys,
};

// OperatorConditions move CSVs when they may gate an upgrade (an Upgradeable entry) or are
// gone (the generator makes them again). Dropping an entry is seen by the Pending requeue.
const conditionNamespace = namespaceTrigger('OperatorCondition');
const operatorConditionTrigger: Trigger = {
  kind: 'OperatorCondition',
  workKeys: (c) => {
    const condition = c.object as OperatorConditionObject | undefined;
    return condition === undefined || mentionsUpgradeable(condition)
      ? conditionNamespace.workKeys(c)
      : [];
  },
};

/** The CSV function over `clients` (by cluster id). */
export function csvFunction(options: {
  clients: ReadonlyMap<string, KubeClient>;
  scoped: ScopedClients;
  metrics?: InstallMetrics;
  now?: () => Date;
  /** Lifetime of issued serving certificates (default: upstream's 730 days). */
  certificateLifetimeMs?: number;
  /**
   * Where the CRDs a CSV requires are read when it serves no webhooks (whose conversion
   * settings are written back to the whole CRD): the mirror, as upstream reads its informers.
   * Without it, from the API.
   */
  mirror?: MirrorSource;
}): FunctionDefinition<CsvNamespaceSnapshot, CsvNamespaceWrites> {
  const now = options.now ?? (() => new Date());
  const lifetimeMs = options.certificateLifetimeMs ?? defaultCertificateLifetimeMs;
  const clientOf = (cluster: string): KubeClient => {
    const client = options.clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  return {
    name: 'install-csv',
    triggers: [
      ...[
        'ClusterServiceVersion',
        'OperatorGroup',
        'Deployment',
        'ServiceAccount',
        'InstallPlan',
      ].map(namespaceTrigger),
      subscriptionTrigger,
      operatorConditionTrigger,
    ],
    async load(work: WorkContext): Promise<CsvNamespaceSnapshot> {
      const [namespace = ''] = work.key;
      const client = clientOf(work.cluster);
      const [
        csvs,
        operatorGroups,
        deployments,
        serviceAccounts,
        subscriptions,
        operatorConditions,
      ] = await Promise.all([
        client.list<CsvObject>({ ...olm('ClusterServiceVersion'), namespace }),
        client.list({ ...olm('OperatorGroup', 'v1'), namespace }),
        client.list({ apiVersion: 'apps/v1', kind: 'Deployment', namespace }),
        client.list({ apiVersion: 'v1', kind: 'ServiceAccount', namespace }),
        client.list({ ...olm('Subscription'), namespace }),
        client.list({
          apiVersion: operatorConditionApiVersion,
          kind: 'OperatorCondition',
          namespace,
        }),
      ]);
      const crds = new Map<string, KubeObject>();
      const mirror = csvs.items.some(servesWebhooks) ? undefined : options.mirror;
      await Promise.all(
        crdNamesOf(csvs.items).map(async (name) => {
          const ref = { kind: 'CustomResourceDefinition', namespace: '', name };
          const crd =
            mirror === undefined
              ? await client.get({ apiVersion: 'apiextensions.k8s.io/v1', ...ref })
              : await getMirrored<KubeObject>(mirror, { cluster: work.cluster, ...ref });
          if (crd !== undefined) crds.set(name, crd);
        }),
      );
      let clusterRbac: KubeObject[] = [];
      if (csvs.items.some((c) => c.metadata.deletionTimestamp !== undefined)) {
        const labelSelector = `olm.owner.namespace=${namespace},olm.owner.kind=ClusterServiceVersion`;
        const lists = await Promise.all(
          [
            { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
            { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' },
            {
              apiVersion: 'admissionregistration.k8s.io/v1',
              kind: 'ValidatingWebhookConfiguration',
            },
            { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration' },
            { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService' },
          ].map((kind) => client.list(kind, { labelSelector })),
        );
        clusterRbac = lists.flatMap((l) => l.items);
      }
      const scope = await operatorGroupScope(client, namespace, {
        groups: operatorGroups.items,
        serviceAccounts: serviceAccounts.items,
      });
      const scoped =
        scope !== undefined && 'serviceAccount' in scope
          ? { serviceAccount: scope.serviceAccount }
          : undefined;
      const certified = await loadCertified(client, namespace, csvs.items, now(), lifetimeMs);
      return {
        namespace,
        operatorConditions: new Map(
          operatorConditions.items.map((c) => [c.metadata.name ?? '', c] as const),
        ),
        now: now(),
        ...certified,
        ...(scoped === undefined ? {} : { scope: scoped }),
        csvs: csvs.items,
        operatorGroups: operatorGroups.items,
        crds,
        serviceAccounts: serviceAccounts.items,
        deployments: deployments.items,
        subscriptions: subscriptions.items,
        clusterRbac,
      };
    },
    decide: decideNamespace,
    async apply(writes: CsvNamespaceWrites, work: WorkContext): Promise<void> {
      const client = clientOf(work.cluster);
      const final: CsvObject[] = [];
      // OperatorConditions never hold up the CSVs: a failed write is retried on the next pass.
      for (const w of writes.operatorConditions ?? []) {
        try {
          await executeWrites(client, [w], installFieldManager);
        } catch (error) {
          if (error instanceof StaleDecisionError) throw error;
          work.log.warn({ err: error }, 'could not write an OperatorCondition');
        }
      }
      const scope = writes.scope;
      for (const c of writes.csvs) {
        let status = c.status;
        const events = [...(c.events ?? [])];
        // The install strategy's objects are written as the scoped service account, if any.
        const writer =
          c.onFailure === 'installStrategy' && scope !== undefined
            ? options.scoped.clientFor(client, writes.namespace, scope.serviceAccount)
            : client;
        try {
          await executeWrites(writer, c.writes, installFieldManager);
        } catch (error) {
          if (error instanceof StaleDecisionError || c.onFailure === undefined) throw error;
          const forbidden = error instanceof KubeApiError && error.reason === 'Forbidden';
          status = transitioned(
            c.chained ?? c.csv,
            {
              phase: 'Failed',
              reason: forbidden ? 'InstallComponentFailedNoRetry' : 'InstallComponentFailed',
              message: `install strategy failed: ${(error as Error).message}`,
            },
            now(),
          );
          work.log.info({ csv: c.csv.metadata.name, err: error }, 'install strategy failed');
        }
        if (status !== undefined && status !== c.csv.status) {
          try {
            await client.updateStatus({ ...c.csv, status });
          } catch (error) {
            if (isConflict(error)) {
              throw new StaleDecisionError(`CSV status: ${(error as Error).message}`, {
                cause: error,
              });
            }
            throw error;
          }
          if (c.upgrade === true) options.metrics?.csvUpgradeCount.inc();
          if (c.onFailure !== undefined) {
            const from = c.chained ?? c.csv;
            const event = csvPhaseEvent(c.csv, from.status, status, now());
            if (event !== undefined) events.push(event);
          }
        }
        await recordEvents(client, events, work);
        const deleted = c.writes.some(
          (w) => w.op === 'delete' && w.ref.kind === 'ClusterServiceVersion',
        );
        if (!deleted) final.push({ ...c.csv, ...(status === undefined ? {} : { status }) });
      }
      options.metrics?.observeNamespace(work.cluster, writes.namespace, final);
    },
  };
}
