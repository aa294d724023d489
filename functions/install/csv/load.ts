// What one namespace pass of the CSV lifecycle reads: the namespace's CSVs (from the mirror when
// it shows this function's own writes, else from the API: csvsOf); its OperatorGroups, Subscriptions, OperatorConditions, Deployments and ServiceAccounts from the
// watcher's mirror (../mirrored.ts); the CRDs the CSVs name, cluster objects to clean up after
// deleted CSVs, the install scope, and serving certificates (reused, or issued here: key
// generation is not for a pure decision).
import type { Deployment, ServiceAccount } from '../../../shared/api/core.js';
import type { OperatorCondition, OperatorGroup, Subscription } from '../../../shared/api/index.js';
import type { KubeClient, KubeObject, ObjectRef } from '../../../shared/kube/client.js';
import type { OwnWrites } from '../../../shared/kube/own-writes.js';
import type { Served } from '../../../shared/kube/served.js';
import { getMirrored, listMirrored, type MirrorSource } from '../../../shared/bus/mirror-read.js';
import { mirroredWithNeeded, type KnownAbsent } from '../mirrored.js';
import {
  issueServingCertificate,
  reusableCertificate,
  serviceHosts,
  type ServingCertificate,
} from '../certificates.js';
import type { Crd } from '../crds.js';
import { apiServiceName } from './apiservices.js';
import type { Csv } from '../csv-status.js';
import { operatorGroupScope } from '../scope.js';
import { csvCleanupFinalizer } from './gates.js';
import { loadRequirements, type ClusterRbacViews } from './load-requirements.js';
import { crdNamesOf } from './requirements.js';
import { strategyOf } from './strategy.js';
import type { CsvNamespaceSnapshot } from './types.js';
import {
  authDelegatorBindingName,
  authReaderBindingName,
  authReaderNamespace,
  certificateSecretName,
  certifiedDeployments,
  existingKey,
  ownedApiServicesOf,
  serviceNameOf,
} from './webhooks.js';

// New and Pending CSVs too: a pass chains None → Pending → InstallReady and writes the strategy
// at once, so the first Deployment must already carry its certificate volumes (one rollout, as
// upstream).
const certifiedPhases = new Set([
  '',
  'Pending',
  'InstallReady',
  'Installing',
  'Succeeded',
  'Failed',
]);
const beforeInstall = new Set(['', 'None', 'Pending']);

/** Certificates and existing objects for CSVs with webhooks or owned APIServices. */
async function loadCertified(
  client: KubeClient,
  namespace: string,
  csvs: readonly Csv[],
  at: Date,
  lifetimeMs: number,
): Promise<Pick<CsvNamespaceSnapshot, 'certificates' | 'existing' | 'webhookConfigurations'>> {
  const certificates = new Map<string, Map<string, ServingCertificate>>();
  const existing = new Map<string, KubeObject>();
  const relevant = csvs.filter(
    (c) => certifiedDeployments(c).size > 0 && certifiedPhases.has(c.status?.phase ?? ''),
  );
  const remember = async (ref: ObjectRef): Promise<KubeObject | undefined> => {
    const object = await client.get(ref);
    if (object !== undefined)
      existing.set(existingKey(ref.kind, ref.namespace, ref.name ?? ''), object);
    return object;
  };
  // The owned APIServices of a CSV before its install (None and Pending are decided in one
  // pass), for the adoption check.
  const apiServiceRef = (d: { version?: string; group?: string }): ObjectRef => ({
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    name: apiServiceName(d),
  });
  await Promise.all(
    csvs
      .filter(
        (c) =>
          beforeInstall.has(c.status?.phase ?? '') &&
          c.metadata.labels?.['olm.copiedFrom'] === undefined,
      )
      .flatMap((c) => ownedApiServicesOf(c).map((d) => remember(apiServiceRef(d)))),
  );
  if (relevant.length === 0) return { certificates, existing, webhookConfigurations: [] };
  const rbac = 'rbac.authorization.k8s.io/v1';
  for (const csv of relevant) {
    const perDeployment = new Map<string, ServingCertificate>();
    certificates.set(csv.metadata.name ?? '', perDeployment);
    for (const deployment of certifiedDeployments(csv).keys()) {
      const service = serviceNameOf(deployment);
      const secretName = certificateSecretName(service);
      const [secret] = await Promise.all([
        remember({ apiVersion: 'v1', kind: 'Secret', namespace, name: secretName }),
        remember({ apiVersion: 'v1', kind: 'Service', namespace, name: service }),
        remember({ apiVersion: rbac, kind: 'Role', namespace, name: secretName }),
        remember({ apiVersion: rbac, kind: 'RoleBinding', namespace, name: secretName }),
        remember({
          apiVersion: rbac,
          kind: 'ClusterRoleBinding',
          name: authDelegatorBindingName(service),
        }),
        remember({
          apiVersion: rbac,
          kind: 'RoleBinding',
          namespace: authReaderNamespace,
          name: authReaderBindingName(service),
        }),
      ]);
      const hosts = serviceHosts(service, namespace);
      perDeployment.set(
        deployment,
        (await reusableCertificate(secret, hosts, at)) ??
          (await issueServingCertificate(hosts, at, lifetimeMs)),
      );
    }
    for (const api of ownedApiServicesOf(csv)) await remember(apiServiceRef(api));
  }
  const labelSelector = `olm.owner.namespace=${namespace},olm.owner.kind=ClusterServiceVersion`;
  const lists = await Promise.all(
    ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].map((kind) =>
      client.list({ apiVersion: 'admissionregistration.k8s.io/v1', kind }, { labelSelector }),
    ),
  );
  return { certificates, existing, webhookConfigurations: lists.flatMap((l) => l.items) };
}

const olm = (kind: string, version = 'v1alpha1') => ({
  apiVersion: `operators.coreos.com/${version}`,
  kind,
});

/** Whether the CSV defines webhooks (conversion webhooks patch its CRDs). */
const servesWebhooks = (csv: Csv): boolean => (csv.spec?.webhookdefinitions?.length ?? 0) > 0;

/** Where the namespace pass reads from, and its clock. */
export interface CsvLoadContext {
  client: KubeClient;
  cluster: string;
  /**
   * The watcher's mirror: OperatorGroups, Subscriptions, OperatorConditions, Deployments,
   * ServiceAccounts, RBAC, and the CRDs a CSV requires when it serves no webhooks.
   */
  mirror: MirrorSource;
  /** A live view of ClusterRoles and ClusterRoleBindings (requirement checks). */
  clusterRbac: ClusterRbacViews;
  now: () => Date;
  /** Lifetime of issued serving certificates. */
  certificateLifetimeMs: number;
  /** The CSV writes of this function's earlier passes (the mirror must show them to be read). */
  ownWrites: OwnWrites;
  /** Deployments and ServiceAccounts a strategy names that the API lacked, not mirrored since. */
  absent: KnownAbsent;
}

const copied = (csv: Csv): boolean => csv.metadata.labels?.['olm.copiedFrom'] !== undefined;

/**
 * Whether a pass can decide on the mirror's CSVs: no CSV needs a whole-object update (its
 * cleanup finalizer added or removed: the mirror trims icon and description), no copy could be
 * what a CSV of the namespace is replaced by (copies are mirrored without their spec), and the
 * mirror shows every CSV write of this function's earlier passes, with no conflict since.
 */
export function mirroredCsvsServe(
  csvs: readonly Csv[],
  ownWrites: OwnWrites,
  where: { cluster: string; namespace: string },
): boolean {
  const own = csvs.filter((csv) => !copied(csv));
  return (
    own.every(
      (csv) =>
        csv.metadata.deletionTimestamp === undefined &&
        (csv.metadata.finalizers ?? []).includes(csvCleanupFinalizer),
    ) &&
    (own.length === csvs.length || own.length === 0) &&
    ownWrites.shownIn(where.cluster, where.namespace, { ClusterServiceVersion: csvs })
  );
}

/**
 * The namespace's CSVs: the mirror's when they serve (mirroredCsvsServe), else the API's. Each
 * pass must see the statuses its previous pass wrote, and writes them back conditionally on
 * the version it read: the ledger of own writes says whether the mirror shows them.
 */
async function csvsOf(c: CsvLoadContext, namespace: string): Promise<Csv[]> {
  const where = { cluster: c.cluster, namespace };
  const mirrored = await listMirrored<Csv>(c.mirror, { ...where, kind: 'ClusterServiceVersion' });
  if (mirroredCsvsServe(mirrored, c.ownWrites, where))
    // In the API's order (by name): the pass writes its CSVs in that order.
    return mirrored.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  c.ownWrites.readFromApi(c.cluster, namespace);
  return (await c.client.list<Csv>({ ...olm('ClusterServiceVersion'), namespace })).items;
}

/** The service accounts and deployments the namespace's CSVs and OperatorGroups name. */
function namedByCsvs(
  csvs: readonly Csv[],
  groups: readonly Served<OperatorGroup>[],
): { serviceAccounts: string[]; deployments: string[] } {
  const serviceAccounts: string[] = groups.flatMap((g) => g.spec?.serviceAccountName ?? []);
  const deployments: string[] = [];
  for (const csv of csvs) {
    if (csv.metadata.labels?.['olm.copiedFrom'] !== undefined) continue;
    const strategy = strategyOf(csv);
    if ('invalid' in strategy) continue;
    for (const p of [...strategy.permissions, ...strategy.clusterPermissions])
      serviceAccounts.push(p.serviceAccountName);
    for (const d of strategy.deployments) deployments.push(d.name);
  }
  return { serviceAccounts, deployments };
}

/** Reads what the CSV lifecycle decides `namespace` from. */
export async function loadNamespace(
  namespace: string,
  c: CsvLoadContext,
): Promise<CsvNamespaceSnapshot> {
  const { client, now, mirror: source, cluster } = c;
  const where = { cluster, namespace };
  const mirrored = <T>(kind: string) => listMirrored<T>(source, { ...where, kind });
  const [csvItems, operatorGroups, subscriptions, operatorConditions] = await Promise.all([
    csvsOf(c, namespace),
    // Only read here (their writers' changes trigger this pass, so the mirror has them).
    mirrored<Served<OperatorGroup>>('OperatorGroup'),
    mirrored<Served<Subscription>>('Subscription'),
    // Created by the generator (a create the mirror has not seen yet is AlreadyExists, which
    // is checked) and updated rebased on the API object (apply.ts).
    mirrored<Served<OperatorCondition>>('OperatorCondition'),
  ]);
  const csvs = { items: csvItems };
  const named = namedByCsvs(csvs.items, operatorGroups);
  const [deployments, serviceAccounts] = await Promise.all([
    mirroredWithNeeded<Served<Deployment>>(
      source,
      client,
      where,
      { apiVersion: 'apps/v1', kind: 'Deployment' },
      { names: named.deployments, absent: c.absent },
    ),
    mirroredWithNeeded<Served<ServiceAccount>>(
      source,
      client,
      where,
      { apiVersion: 'v1', kind: 'ServiceAccount' },
      { names: named.serviceAccounts, absent: c.absent },
    ),
  ]);
  const crds = new Map<string, Crd>();
  const mirror = csvs.items.some(servesWebhooks) ? undefined : source;
  await Promise.all(
    crdNamesOf(csvs.items).map(async (name) => {
      const ref = { kind: 'CustomResourceDefinition', namespace: '', name };
      const crd =
        mirror === undefined
          ? await client.get<Crd>({ apiVersion: 'apiextensions.k8s.io/v1', ...ref })
          : await getMirrored<Crd>(mirror, { cluster: c.cluster, ...ref });
      if (crd !== undefined) crds.set(name, crd);
    }),
  );
  let clusterRbac: KubeObject[] = [];
  if (csvs.items.some((csv) => csv.metadata.deletionTimestamp !== undefined)) {
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
        // The auth-reader bindings of webhook and APIService deployments (upstream leaves them).
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          namespace: authReaderNamespace,
        },
      ].map((kind) => client.list(kind, { labelSelector })),
    );
    clusterRbac = lists.flatMap((l) => l.items);
  }
  const scope = await operatorGroupScope(client, namespace, {
    groups: operatorGroups,
    serviceAccounts,
  });
  const scoped =
    scope !== undefined && 'serviceAccount' in scope
      ? { serviceAccount: scope.serviceAccount }
      : undefined;
  const certified = await loadCertified(
    client,
    namespace,
    csvs.items,
    now(),
    c.certificateLifetimeMs,
  );
  const requirements = await loadRequirements(
    client,
    { ...where, mirror: source, clusterRbac: c.clusterRbac },
    csvs.items,
  );
  return {
    namespace,
    ...(requirements === undefined ? {} : { requirements }),
    operatorConditions: new Map(
      operatorConditions.map((oc) => [oc.metadata.name ?? '', oc] as const),
    ),
    now: now(),
    ...certified,
    ...(scoped === undefined ? {} : { scope: scoped }),
    csvs: csvs.items,
    operatorGroups,
    crds,
    serviceAccounts,
    deployments,
    subscriptions,
    clusterRbac,
  };
}
