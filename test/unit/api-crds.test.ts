import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { z } from 'zod';
import type { GeneratedCrd } from '../../shared/api/crd/definitions.js';
import {
  toOpenAPISchema,
  UnsupportedSchemaError,
  type OpenAPISchema,
} from '../../shared/api/crd/openapi.js';
import { renderCrdFiles } from '../../shared/api/crd/render.js';
import { writeCrds } from '../../shared/api/crd/write.js';

// Tests run from dist/test/unit/; the repository root is three levels up.
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const crdsDir = join(repoRoot, 'crds');

interface ExpectedCrd {
  kind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  scope: 'Namespaced' | 'Cluster';
  versions: { name: string; storage: boolean }[];
  columns: [name: string, type: string, jsonPath: string][];
}

const expected: ExpectedCrd[] = [
  {
    kind: 'ClusterServiceVersion',
    plural: 'clusterserviceversions',
    singular: 'clusterserviceversion',
    shortNames: ['csv', 'csvs'],
    scope: 'Namespaced',
    versions: [{ name: 'v1alpha1', storage: true }],
    columns: [
      ['Display', 'string', '.spec.displayName'],
      ['Version', 'string', '.spec.version'],
      ['Release', 'string', '.spec.release'],
      ['Replaces', 'string', '.spec.replaces'],
      ['Phase', 'string', '.status.phase'],
    ],
  },
  {
    kind: 'InstallPlan',
    plural: 'installplans',
    singular: 'installplan',
    shortNames: ['ip'],
    scope: 'Namespaced',
    versions: [{ name: 'v1alpha1', storage: true }],
    columns: [
      ['CSV', 'string', '.spec.clusterServiceVersionNames[0]'],
      ['Approval', 'string', '.spec.approval'],
      ['Approved', 'boolean', '.spec.approved'],
    ],
  },
  {
    kind: 'CatalogSource',
    plural: 'catalogsources',
    singular: 'catalogsource',
    shortNames: ['catsrc'],
    scope: 'Namespaced',
    versions: [{ name: 'v1alpha1', storage: true }],
    columns: [
      ['Display', 'string', '.spec.displayName'],
      ['Type', 'string', '.spec.sourceType'],
      ['Publisher', 'string', '.spec.publisher'],
      ['Age', 'date', '.metadata.creationTimestamp'],
    ],
  },
  {
    kind: 'Subscription',
    plural: 'subscriptions',
    singular: 'subscription',
    shortNames: ['sub', 'subs'],
    scope: 'Namespaced',
    versions: [{ name: 'v1alpha1', storage: true }],
    columns: [
      ['Package', 'string', '.spec.name'],
      ['Source', 'string', '.spec.source'],
      ['Channel', 'string', '.spec.channel'],
    ],
  },
  {
    kind: 'OperatorGroup',
    plural: 'operatorgroups',
    singular: 'operatorgroup',
    shortNames: ['og'],
    scope: 'Namespaced',
    versions: [
      { name: 'v1', storage: true },
      { name: 'v1alpha2', storage: false },
    ],
    columns: [],
  },
  {
    kind: 'OperatorCondition',
    plural: 'operatorconditions',
    singular: 'operatorcondition',
    shortNames: ['condition'],
    scope: 'Namespaced',
    versions: [
      { name: 'v1', storage: false },
      { name: 'v2', storage: true },
    ],
    columns: [],
  },
  {
    kind: 'Operator',
    plural: 'operators',
    singular: 'operator',
    scope: 'Cluster',
    versions: [{ name: 'v1', storage: true }],
    columns: [],
  },
  {
    kind: 'OLMConfig',
    plural: 'olmconfigs',
    singular: 'olmconfig',
    scope: 'Cluster',
    versions: [{ name: 'v1', storage: true }],
    columns: [],
  },
];

function readCrd(plural: string): GeneratedCrd {
  return parse(
    readFileSync(join(crdsDir, `operators.coreos.com_${plural}.yaml`), 'utf8'),
  ) as GeneratedCrd;
}

/** Every schema node with its path, depth first. */
function* nodes(schema: OpenAPISchema, path: string): Generator<[string, OpenAPISchema]> {
  yield [path, schema];
  for (const [key, child] of Object.entries(schema.properties ?? {}))
    yield* nodes(child, `${path}.${key}`);
  if (schema.items !== undefined) yield* nodes(schema.items, `${path}[]`);
  if (schema.additionalProperties !== undefined)
    yield* nodes(schema.additionalProperties, `${path}[*]`);
  for (const [index, child] of (schema.anyOf ?? []).entries())
    yield* nodes(child, `${path}<anyOf ${index}>`);
}

/** The schema node a printer column's simple JSON path points to, if any. */
function nodeAt(schema: OpenAPISchema, jsonPath: string): OpenAPISchema | undefined {
  let current: OpenAPISchema | undefined = schema;
  for (const part of jsonPath.split('.').slice(1)) {
    const match = /^([^[]+)(\[\d+\])?$/.exec(part);
    if (match === null || current === undefined) return undefined;
    current = current.properties?.[match[1] ?? ''];
    if (match[2] !== undefined) current = current?.items;
  }
  return current;
}

void t.test('crds - the files in crds/ match the schemas byte for byte', (t) => {
  const generated = renderCrdFiles();
  const onDisk = readdirSync(crdsDir)
    .filter((name) => name.endsWith('.yaml'))
    .sort();
  t.same(
    onDisk,
    generated.map((file) => file.fileName).sort(),
    'crds/ holds exactly the generated files',
  );
  for (const file of generated) {
    const path = join(crdsDir, file.fileName);
    const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
    t.ok(current === file.text, `${file.fileName} is up to date (if not, run npm run gen:crds)`);
  }
  t.end();
});

void t.test('crds - rendering is deterministic', (t) => {
  t.same(
    renderCrdFiles().map((file) => file.text),
    renderCrdFiles().map((file) => file.text),
  );
  t.end();
});

for (const want of expected) {
  void t.test(`crds - ${want.plural} has upstream names, scope, category and short names`, (t) => {
    const crd = readCrd(want.plural);
    t.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    t.equal(crd.kind, 'CustomResourceDefinition');
    t.equal(crd.metadata.name, `${want.plural}.operators.coreos.com`);
    t.equal(crd.spec.group, 'operators.coreos.com');
    t.same(crd.spec.names, {
      categories: ['olm'],
      kind: want.kind,
      listKind: `${want.kind}List`,
      plural: want.plural,
      singular: want.singular,
      ...(want.shortNames === undefined ? {} : { shortNames: want.shortNames }),
    });
    t.equal(crd.spec.scope, want.scope);
    t.end();
  });

  void t.test(
    `crds - ${want.plural} serves its versions with one storage version and a status subresource`,
    (t) => {
      const crd = readCrd(want.plural);
      t.same(
        crd.spec.versions.map((version) => ({ name: version.name, storage: version.storage })),
        want.versions,
      );
      for (const version of crd.spec.versions) {
        t.equal(version.served, true, `${version.name} is served`);
        t.same(version.subresources, { status: {} }, `${version.name} has the status subresource`);
      }
      t.end();
    },
  );

  void t.test(`crds - ${want.plural} prints the upstream columns`, (t) => {
    const crd = readCrd(want.plural);
    for (const version of crd.spec.versions) {
      const columns = (version.additionalPrinterColumns ?? []).map((c) => [
        c.name,
        c.type,
        c.jsonPath,
      ]);
      t.same(columns, want.columns, `${version.name} columns`);
      for (const [name, , jsonPath] of want.columns) {
        if (jsonPath.startsWith('.metadata.')) continue;
        t.ok(
          nodeAt(version.schema.openAPIV3Schema, jsonPath),
          `column ${name} points at a schema field`,
        );
      }
    }
    t.end();
  });

  void t.test(`crds - ${want.plural} schemas are structural at every node`, (t) => {
    const crd = readCrd(want.plural);
    const problems: string[] = [];
    for (const version of crd.spec.versions) {
      const root = version.schema.openAPIV3Schema;
      if (root.type !== 'object') problems.push(`${version.name}: root is not an object`);
      if (JSON.stringify(root.properties?.metadata) !== '{"type":"object"}') {
        problems.push(`${version.name}: metadata must be just {type: object}`);
      }
      for (const [path, node] of nodes(root, version.name)) {
        const keys = Object.keys(node);
        if (keys.some((key) => key === '$ref' || key === 'definitions'))
          problems.push(`${path}: $ref/definitions`);
        if (node['x-kubernetes-int-or-string'] === true) {
          if (node.type !== undefined) problems.push(`${path}: int-or-string must not have a type`);
          continue;
        }
        if (node.type === undefined) problems.push(`${path}: no type`);
        if (node.properties !== undefined && node.additionalProperties !== undefined) {
          problems.push(`${path}: properties together with additionalProperties`);
        }
        if (node.type === 'array' && node.items === undefined)
          problems.push(`${path}: array without items`);
        if (node['x-kubernetes-preserve-unknown-fields'] === true && node.type !== 'object') {
          problems.push(`${path}: preserve-unknown-fields on a non-object`);
        }
        if (node['x-kubernetes-list-type'] === 'map') {
          for (const key of node['x-kubernetes-list-map-keys'] ?? []) {
            if (!(node.items?.required ?? []).includes(key))
              problems.push(`${path}: list map key ${key} is not required`);
          }
        }
        for (const required of node.required ?? []) {
          if (node.properties?.[required] === undefined)
            problems.push(`${path}: required ${required} is not a property`);
        }
      }
    }
    t.same(problems, []);
    t.end();
  });
}

void t.test('crds - required fields follow the zod schemas', (t) => {
  const csv = readCrd('clusterserviceversions').spec.versions[0]?.schema.openAPIV3Schema;
  t.same(csv?.required, ['metadata', 'spec']);
  t.same(csv?.properties?.spec?.required, ['displayName', 'install']);
  const ip = readCrd('installplans').spec.versions[0]?.schema.openAPIV3Schema;
  t.same(ip?.properties?.spec?.required, ['approval', 'approved', 'clusterServiceVersionNames']);
  t.same(ip?.properties?.status?.required, ['catalogSources', 'phase']);
  const sub = readCrd('subscriptions').spec.versions[0]?.schema.openAPIV3Schema;
  t.same(sub?.properties?.spec?.required, ['name', 'source', 'sourceNamespace']);
  t.end();
});

void t.test('crds - enums, timestamps and opaque parts are typed as Kubernetes expects', (t) => {
  const csv = readCrd('clusterserviceversions').spec.versions[0]?.schema.openAPIV3Schema;
  const status = csv?.properties?.status;
  t.same(status?.properties?.phase?.enum, [
    '',
    'Pending',
    'InstallReady',
    'Installing',
    'Succeeded',
    'Failed',
    'Unknown',
    'Replacing',
    'Deleting',
  ]);
  t.same(
    {
      type: status?.properties?.lastTransitionTime?.type,
      format: status?.properties?.lastTransitionTime?.format,
    },
    { type: 'string', format: 'date-time' },
  );
  const deployment = nodeAt(csv ?? {}, '.spec.install.spec.deployments[0]');
  const deploymentSpec = deployment?.properties?.spec;
  t.same(
    {
      description: deploymentSpec?.description,
      type: deploymentSpec?.type,
      preserve: deploymentSpec?.['x-kubernetes-preserve-unknown-fields'],
    },
    { description: 'An apps/v1 DeploymentSpec.', type: 'object', preserve: true },
    'the embedded DeploymentSpec keeps every field it is given',
  );
  const webhook = nodeAt(csv ?? {}, '.spec.webhookdefinitions[0]');
  t.same(webhook?.properties?.containerPort, {
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: 65535,
    default: 443,
  });
  t.same(webhook?.properties?.targetPort, {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    'x-kubernetes-int-or-string': true,
  });
  t.same(csv?.properties?.spec?.properties?.labels, {
    type: 'object',
    additionalProperties: { type: 'string' },
  });
  t.end();
});

/** The path an UnsupportedSchemaError names; fails the test when nothing or something else is thrown. */
function unsupportedPath(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof UnsupportedSchemaError) return error.path;
    throw error;
  }
  throw new Error('expected an UnsupportedSchemaError');
}

void t.test('crd generator - refuses a union that is not int-or-string, naming where', (t) => {
  const schema = z.object({ spec: z.object({ value: z.union([z.string(), z.boolean()]) }) });
  t.equal(
    unsupportedPath(() => toOpenAPISchema(schema)),
    'spec.value',
  );
  t.end();
});

void t.test('crd generator - refuses an untyped value outside an opaque object', (t) => {
  t.equal(
    unsupportedPath(() => toOpenAPISchema(z.object({ anything: z.unknown() }))),
    'anything',
  );
  t.end();
});

void t.test('crd generator - carries descriptions and defaults of wrapped fields', (t) => {
  const schema = z.object({ size: z.int32().default(3).describe('How many.') });
  t.same(toOpenAPISchema(schema), {
    type: 'object',
    properties: {
      size: { description: 'How many.', type: 'integer', format: 'int32', default: 3 },
    },
  });
  t.end();
});

void t.test('crds - condition lists merge by type and namespace lists are sets', (t) => {
  const catalog = readCrd('catalogsources').spec.versions[0]?.schema.openAPIV3Schema;
  const conditions = nodeAt(catalog ?? {}, '.status.conditions');
  t.equal(conditions?.['x-kubernetes-list-type'], 'map');
  t.same(conditions?.['x-kubernetes-list-map-keys'], ['type']);
  const group = readCrd('operatorgroups').spec.versions[0]?.schema.openAPIV3Schema;
  t.equal(nodeAt(group ?? {}, '.spec.targetNamespaces')?.['x-kubernetes-list-type'], 'set');
  t.equal(nodeAt(group ?? {}, '.status.namespaces')?.['x-kubernetes-list-type'], 'set');
  t.end();
});

void t.test('crd generator - refuses list extensions on something that is not a list', (t) => {
  const schema = z.object({ name: z.string().meta({ 'x-kubernetes-list-type': 'set' }) });
  t.equal(
    unsupportedPath(() => toOpenAPISchema(schema)),
    'name',
  );
  t.end();
});

void t.test('crd writer - writes every CRD and removes stale generated files only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-crds-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'operators.coreos.com_gone.yaml'), 'stale');
  writeFileSync(join(dir, 'kustomization.yaml'), 'kept');
  const written = await writeCrds(dir);
  t.same(readdirSync(dir).sort(), [...written, 'kustomization.yaml'].sort());
  for (const file of renderCrdFiles())
    t.equal(readFileSync(join(dir, file.fileName), 'utf8'), file.text);
});
