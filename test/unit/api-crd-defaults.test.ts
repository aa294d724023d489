import t from 'tap';
import { z } from 'zod';
import { clusterServiceVersionSchema } from '../../shared/api/clusterserviceversion.js';
import { buildCrd, kindDefinitions } from '../../shared/api/crd/definitions.js';
import { toOpenAPISchema, type OpenAPISchema } from '../../shared/api/crd/openapi.js';
import { serverDefault } from '../../shared/api/meta.js';
import { parseObject } from '../../shared/api/validation.js';
import type { JsonObject } from '../../shared/kube/json.js';
import { applyDefaults, prune } from '../../shared/kube/schema/index.js';
import { portsCsv } from '../fixtures/ports-csv.js';

// Every `default:` in upstream OLM v0.26.0's CRDs (deploy/chart/crds), by kind, version and
// schema path ("[]" for list items). Stored objects carry these on both systems.
const upstreamDefaults: [kind: string, version: string, path: string, value: unknown][] = [
  [
    'ClusterServiceVersion',
    'v1alpha1',
    '.spec.install.spec.deployments[].spec.template.spec.containers[].ports[].protocol',
    'TCP',
  ],
  [
    'ClusterServiceVersion',
    'v1alpha1',
    '.spec.install.spec.deployments[].spec.template.spec.initContainers[].ports[].protocol',
    'TCP',
  ],
  [
    'ClusterServiceVersion',
    'v1alpha1',
    '.spec.install.spec.deployments[].spec.template.spec.ephemeralContainers[].ports[].protocol',
    'TCP',
  ],
  ['ClusterServiceVersion', 'v1alpha1', '.spec.webhookdefinitions[].containerPort', 443],
  ['CatalogSource', 'v1alpha1', '.spec.grpcPodConfig.securityContextConfig', 'legacy'],
  ['OperatorGroup', 'v1', '.spec', { upgradeStrategy: 'Default' }],
  ['OperatorGroup', 'v1', '.spec.upgradeStrategy', 'Default'],
];

/** Every default of a schema by path; `""` defaults (olmq's Go-string fields) left out. */
function defaultsOf(schema: OpenAPISchema, path = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (schema.default !== undefined && schema.default !== '') out.set(path, schema.default);
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    for (const [p, v] of defaultsOf(child, `${path}.${key}`)) out.set(p, v);
  if (schema.items !== undefined)
    for (const [p, v] of defaultsOf(schema.items, `${path}[]`)) out.set(p, v);
  return out;
}

function generatedDefaults(): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const definition of kindDefinitions) {
    const crd = buildCrd(definition);
    for (const version of crd.spec.versions) {
      for (const [path, value] of defaultsOf(version.schema.openAPIV3Schema))
        out.set(`${crd.spec.names.kind} ${version.name} ${path}`, value);
    }
  }
  return out;
}

void t.test('crd defaults - the generated CRDs carry exactly the defaults upstream has', (t) => {
  const expected = new Map(upstreamDefaults.map(([k, v, p, value]) => [`${k} ${v} ${p}`, value]));
  t.same(Object.fromEntries(generatedDefaults()), Object.fromEntries(expected));
  t.end();
});

void t.test('crd defaults - a server default is in the CRD but parsing leaves it absent', (t) => {
  const schema = z.object({ protocol: serverDefault(z.string(), 'TCP').optional() });
  t.same(toOpenAPISchema(schema), {
    type: 'object',
    properties: { protocol: { type: 'string', default: 'TCP' } },
  });
  t.same(schema.parse({}), {}, 'zod does not fill it in');
  t.end();
});

const csvSchema = (): JsonObject => {
  const definition = kindDefinitions.find((d) => d.kind === 'ClusterServiceVersion');
  if (definition === undefined) throw new Error('no ClusterServiceVersion definition');
  return buildCrd(definition).spec.versions[0]?.schema.openAPIV3Schema as unknown as JsonObject;
};

void t.test('crd defaults - a stored CSV gets protocol TCP on ports that lack one', (t) => {
  const schema = csvSchema();
  const pruned = prune({ spec: portsCsv.spec }, schema);
  t.same(pruned.unknownFields, [], 'nothing of the DeploymentSpec is pruned');
  const stored = applyDefaults({ spec: portsCsv.spec }, schema) as {
    spec: typeof portsCsv.spec;
  };
  const deployment = stored.spec.install.spec.deployments[0]?.spec;
  const pod = deployment?.template.spec;
  t.same(pod?.containers[0]?.ports, [
    { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
    { name: 'dns', containerPort: 53, protocol: 'UDP' },
  ]);
  t.same(pod?.initContainers[0]?.ports, [{ containerPort: 9000, protocol: 'TCP' }]);
  t.same(pod?.ephemeralContainers[0]?.ports, [{ containerPort: 9001, protocol: 'TCP' }]);
  t.same(deployment?.selector, { matchLabels: { app: 'ports' } }, 'other fields kept');
  t.end();
});

void t.test('crd defaults - parsing a bundle CSV does not add the protocol', (t) => {
  const parsed = parseObject(clusterServiceVersionSchema, portsCsv, 'ClusterServiceVersion');
  const pod = parsed.spec.install.spec?.deployments[0]?.spec.template?.spec;
  t.same(pod?.containers?.[0]?.ports, [
    { name: 'metrics', containerPort: 8080 },
    { name: 'dns', containerPort: 53, protocol: 'UDP' },
  ]);
  t.same(parsed.spec.install.spec?.deployments[0]?.spec['selector'], {
    matchLabels: { app: 'ports' },
  });
  t.end();
});
