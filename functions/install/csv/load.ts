// What one namespace pass of the CSV lifecycle reads, from the API: the namespace's CSVs,
// OperatorGroups, Deployments, ServiceAccounts, Subscriptions and OperatorConditions, the CRDs
// the CSVs name, cluster objects to clean up after deleted CSVs, the install scope, and serving
// certificates (reused, or issued here: key generation is not for a pure decision).
import type { Deployment, ServiceAccount } from '../../../shared/api/core.js';
import type { OperatorCondition, OperatorGroup, Subscription } from '../../../shared/api/index.js';
import type { KubeClient, KubeObject, ObjectRef } from '../../../shared/kube/client.js';
import type { Served } from '../../../shared/kube/served.js';
import { getMirrored, type MirrorSource } from '../../../shared/bus/mirror-read.js';
import {
  issueServingCertificate,
  reusableCertificate,
  serviceHosts,
  type ServingCertificate,
} from '../certificates.js';
import type { Crd } from '../crds.js';
import { apiServiceName } from './apiservices.js';
import type { Csv } from '../csv-status.js';
import { operatorConditionApiVersion } from '../operator-conditions/index.js';
import { operatorGroupScope } from '../scope.js';
import { loadRequirements } from './load-requirements.js';
import { crdNamesOf } from './requirements.js';
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
   * Where the CRDs a CSV requires are read when it serves no webhooks: the mirror; without it,
   * from the API.
   */
  mirror: MirrorSource | undefined;
  now: () => Date;
  /** Lifetime of issued serving certificates. */
  certificateLifetimeMs: number;
}

/** Reads what the CSV lifecycle decides `namespace` from. */
export async function loadNamespace(
  namespace: string,
  c: CsvLoadContext,
): Promise<CsvNamespaceSnapshot> {
  const { client, now } = c;
  const [csvs, operatorGroups, deployments, serviceAccounts, subscriptions, operatorConditions] =
    await Promise.all([
      client.list<Csv>({ ...olm('ClusterServiceVersion'), namespace }),
      client.list<Served<OperatorGroup>>({ ...olm('OperatorGroup', 'v1'), namespace }),
      client.list<Served<Deployment>>({ apiVersion: 'apps/v1', kind: 'Deployment', namespace }),
      client.list<Served<ServiceAccount>>({ apiVersion: 'v1', kind: 'ServiceAccount', namespace }),
      client.list<Served<Subscription>>({ ...olm('Subscription'), namespace }),
      client.list<Served<OperatorCondition>>({
        apiVersion: operatorConditionApiVersion,
        kind: 'OperatorCondition',
        namespace,
      }),
    ]);
  const crds = new Map<string, Crd>();
  const mirror = csvs.items.some(servesWebhooks) ? undefined : c.mirror;
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
    groups: operatorGroups.items,
    serviceAccounts: serviceAccounts.items,
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
  const requirements = await loadRequirements(client, namespace, csvs.items);
  return {
    namespace,
    ...(requirements === undefined ? {} : { requirements }),
    operatorConditions: new Map(
      operatorConditions.items.map((oc) => [oc.metadata.name ?? '', oc] as const),
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
}
