// Manifests and object readers for the kubectl workflow suites: a custom resource from the
// repository's CRDs (CatalogSource) and two built-in kinds (ConfigMap, Deployment).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOk } from './kubectl-suite.js';
import { rawRequest, type ClusterFixture } from './devcluster.js';
import { repoRoot } from './repo.js';

/** A stored object as the suites read it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    resourceVersion: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    managedFields?: ManagedFieldsEntry[];
  };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  status?: Record<string, unknown>;
}

/** One metadata.managedFields entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  fieldsV1: Record<string, unknown>;
}

/** The annotation kubectl's client-side apply records the applied file in. */
export const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

/** Installs the CatalogSource CRD and waits until it is served. */
export async function installCatalogSourceCrd(fixture: ClusterFixture): Promise<void> {
  await kubectlOk(fixture, [
    'apply',
    '-f',
    join(repoRoot, 'crds', 'operators.coreos.com_catalogsources.yaml'),
  ]);
  await kubectlOk(fixture, [
    'wait',
    '--for=condition=Established',
    '--timeout=30s',
    'crd/catalogsources.operators.coreos.com',
  ]);
}

/** Fields of the CatalogSource manifest: spec fields (absent ones are left out) and labels. */
export interface CatalogSourceFields {
  image: string;
  displayName?: string;
  publisher?: string;
  priority?: number;
}

/** A CatalogSource manifest in namespace default. */
export function catalogSourceYaml(name: string, spec: CatalogSourceFields): string {
  const lines = [
    'apiVersion: operators.coreos.com/v1alpha1',
    'kind: CatalogSource',
    'metadata:',
    `  name: ${name}`,
    '  namespace: default',
    'spec:',
    '  sourceType: grpc',
    `  image: ${spec.image}`,
  ];
  if (spec.displayName !== undefined) lines.push(`  displayName: ${spec.displayName}`);
  if (spec.publisher !== undefined) lines.push(`  publisher: ${spec.publisher}`);
  if (spec.priority !== undefined) lines.push(`  priority: ${spec.priority}`);
  return `${lines.join('\n')}\n`;
}

/** A ConfigMap manifest in namespace default with these data keys. */
export function configMapYaml(name: string, data: Record<string, string>): string {
  const entries = Object.entries(data).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`);
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    '  namespace: default',
    'data:',
    ...entries,
    '',
  ].join('\n');
}

/** Fields of the Deployment manifest. */
export interface DeploymentFields {
  replicas: number;
  image: string;
  /** Environment variables of the one container, in order; none when absent. */
  env?: Record<string, string>;
}

/** A Deployment manifest (one container "app") in namespace default. */
export function deploymentYaml(name: string, spec: DeploymentFields): string {
  const env = Object.entries(spec.env ?? {});
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `  name: ${name}`,
    '  namespace: default',
    'spec:',
    `  replicas: ${spec.replicas}`,
    '  selector:',
    `    matchLabels: {app: ${name}}`,
    '  template:',
    '    metadata:',
    `      labels: {app: ${name}}`,
    '    spec:',
    '      containers:',
    '      - name: app',
    `        image: ${spec.image}`,
    ...(env.length > 0
      ? [
          '        env:',
          ...env.map(([k, v]) => `        - {name: ${k}, value: ${JSON.stringify(v)}}`),
        ]
      : []),
    '',
  ].join('\n');
}

/** Writes a manifest into the fixture's directory; returns its path. */
export function writeManifest(fixture: ClusterFixture, file: string, text: string): string {
  const path = join(fixture.dir, file);
  writeFileSync(path, text);
  return path;
}

/** The entry of `manager` (and operation) in an object's managedFields. */
export function managedBy(
  object: KubeObject,
  manager: string,
  operation?: 'Apply' | 'Update',
): ManagedFieldsEntry | undefined {
  return object.metadata.managedFields?.find(
    (e) => e.manager === manager && (operation === undefined || e.operation === operation),
  );
}

/** The one container of a Deployment read from the cluster. */
export function containerOf(object: KubeObject): Record<string, unknown> {
  const template = object.spec?.['template'] as
    { spec: { containers: Record<string, unknown>[] } } | undefined;
  const container = template?.spec.containers[0];
  if (container === undefined) throw new Error(`${object.metadata.name} has no container`);
  return container;
}

// API paths of the kinds the suites use, in namespace default.
const collections: Readonly<Record<string, string>> = {
  catalogsource: '/apis/operators.coreos.com/v1alpha1/namespaces/default/catalogsources',
  configmap: '/api/v1/namespaces/default/configmaps',
  deployment: '/apis/apps/v1/namespaces/default/deployments',
};

/**
 * Reads an object in namespace default straight from the API (cheaper than a kubectl run);
 * `resource` is kubectl's singular name, e.g. "configmap".
 */
export async function readObject(
  fixture: ClusterFixture,
  resource: string,
  name: string,
): Promise<KubeObject> {
  const collection = collections[resource];
  if (collection === undefined) throw new Error(`no API path known for ${resource}`);
  const response = await rawRequest(fixture, 'GET', `${collection}/${name}`);
  if (response.status !== 200)
    throw new Error(`GET ${resource} ${name}: ${response.status} ${response.body}`);
  return JSON.parse(response.body) as KubeObject;
}
