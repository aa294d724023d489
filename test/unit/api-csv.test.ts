import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterServiceVersionSchema } from '../../shared/api/clusterserviceversion.js';
import { matchFieldNamesLikeGo } from '../../shared/api/gojson.js';
import { ObjectValidationError, parseObject, statusCauses } from '../../shared/api/validation.js';
import { operatorhubPackages, smallCatalog } from '../harness/repo.js';

interface CatalogCsv {
  source: string;
  csv: Record<string, unknown>;
}

interface Property {
  type: string;
  value: Record<string, unknown>;
}

/**
 * A stub CSV from an `olm.csv.metadata` property, for bundles that carry no CSV manifest: the
 * metadata fields map onto the CSV spec under their CSV names, with an empty install strategy.
 */
function csvFromMetadata(name: string, metadata: Record<string, unknown>): Record<string, unknown> {
  const { annotations, labels, crdDescriptions, apiServiceDefinitions, ...rest } = metadata;
  const spec: Record<string, unknown> = {
    ...rest,
    install: { strategy: 'deployment', spec: { deployments: [] } },
  };
  if (crdDescriptions !== undefined) spec.customresourcedefinitions = crdDescriptions;
  if (apiServiceDefinitions !== undefined) spec.apiservicedefinitions = apiServiceDefinitions;
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name, annotations, labels },
    spec,
  };
}

/** Every CSV of every bundle in a catalogs folder (decoded olm.bundle.object, or a stub). */
function* catalogCsvs(root: string): Generator<CatalogCsv> {
  for (const pkg of readdirSync(root).sort()) {
    const file = join(root, pkg, 'catalog.json');
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const blob = JSON.parse(line) as { schema: string; name: string; properties?: Property[] };
      if (blob.schema !== 'olm.bundle') continue;
      const source = `${pkg}/${blob.name}`;
      let found = false;
      for (const property of blob.properties ?? []) {
        if (property.type !== 'olm.bundle.object') continue;
        const data = property.value.data as string;
        const object = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as Record<
          string,
          unknown
        >;
        if (object.kind === 'ClusterServiceVersion') {
          found = true;
          yield { source, csv: object };
        }
      }
      if (found) continue;
      const metadata = (blob.properties ?? []).find(
        (property) => property.type === 'olm.csv.metadata',
      );
      if (metadata !== undefined)
        yield {
          source: `${source} (olm.csv.metadata)`,
          csv: csvFromMetadata(blob.name, metadata.value),
        };
    }
  }
}

function parseCsv(value: unknown) {
  return parseObject(
    clusterServiceVersionSchema,
    matchFieldNamesLikeGo(clusterServiceVersionSchema, value),
    'csv',
  );
}

function validationError(fn: () => unknown): ObjectValidationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ObjectValidationError) return error;
    throw error;
  }
  throw new Error('expected an ObjectValidationError, got none');
}

/** A small valid CSV to break in the tests below. */
function sampleCsv(): Record<string, unknown> {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: 'etcdoperator.v0.9.4',
      namespace: 'olm',
      annotations: { 'olm.skipRange': '<0.9.4' },
    },
    spec: {
      displayName: 'etcd',
      version: '0.9.4',
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            {
              name: 'etcd-operator',
              spec: { replicas: 1, template: { spec: { containers: [] } } },
            },
          ],
          permissions: [
            {
              serviceAccountName: 'etcd-operator',
              rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }],
            },
          ],
        },
      },
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: {
        owned: [
          {
            name: 'etcdclusters.etcd.database.coreos.com',
            version: 'v1beta2',
            kind: 'EtcdCluster',
          },
        ],
      },
    },
    status: {
      phase: 'Succeeded',
      reason: 'InstallSucceeded',
      message: 'install strategy completed with no errors',
    },
  };
}

// The real packages kept in the repository (the whole community catalog: bench/catalog-real.ts).
for (const [folder, root] of [
  ['example', smallCatalog],
  ['operatorhub', operatorhubPackages],
] as const) {
  void t.test(`csv schema - accepts every CSV of the ${folder} catalogs`, (t) => {
    let checked = 0;
    const failures: string[] = [];
    for (const { source, csv } of catalogCsvs(root)) {
      checked += 1;
      try {
        parseCsv(csv);
      } catch (error) {
        failures.push(`${source}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    t.ok(checked > 0, `found CSVs in ${root}`);
    t.same(failures, [], `${checked} CSVs checked in ${folder}/, ${failures.length} rejected`);
    t.end();
  });
}

void t.test('csv schema - rejects installModes of the wrong type, naming the field', (t) => {
  const csv = sampleCsv();
  (csv.spec as Record<string, unknown>).installModes = 'AllNamespaces';
  const error = validationError(() => parseCsv(csv));
  t.same(
    error.issues.map((issue) => [issue.field, issue.type]),
    [['spec.installModes', 'FieldValueTypeInvalid']],
  );
  t.match(
    error.message,
    /spec\.installModes: Invalid value: "AllNamespaces": must be of type array/,
  );
  t.end();
});

void t.test(
  'csv schema - rejects an unknown status phase, naming the field and the supported values',
  (t) => {
    const csv = sampleCsv();
    (csv.status as Record<string, unknown>).phase = 'Exploded';
    const error = validationError(() => parseCsv(csv));
    t.same(
      error.issues.map((issue) => [issue.field, issue.type]),
      [['status.phase', 'FieldValueNotSupported']],
    );
    t.match(
      error.message,
      /status\.phase: Unsupported value: "Exploded": supported values: "", "Pending"/,
    );
    t.end();
  },
);

void t.test('csv schema - names every bad field of a broken CSV in one error', (t) => {
  const csv = sampleCsv();
  const spec = csv.spec as Record<string, unknown>;
  spec.installModes = [
    { type: 'OwnNamespace', supported: true },
    { type: 'AllNamespaces', supported: 'yes' },
  ];
  (csv.status as Record<string, unknown>).phase = 'Exploded';
  delete spec.displayName;
  const error = validationError(() => parseCsv(csv));
  t.same(
    error.issues.map((issue) => issue.field),
    ['spec.displayName', 'spec.installModes[1].supported', 'status.phase'],
  );
  for (const field of ['spec.displayName', 'spec.installModes[1].supported', 'status.phase']) {
    t.ok(error.message.includes(field), `message names ${field}`);
  }
  t.end();
});

void t.test('csv schema - reports a missing required field as FieldValueRequired', (t) => {
  const csv = sampleCsv();
  delete (csv.spec as Record<string, unknown>).install;
  const error = validationError(() => parseCsv(csv));
  t.same(statusCauses(error), [
    { type: 'FieldValueRequired', field: 'spec.install', message: 'Required value' },
  ]);
  t.end();
});

void t.test('csv schema - prints map keys with dots in brackets, as Kubernetes does', (t) => {
  const csv = sampleCsv();
  (csv.metadata as Record<string, unknown>).annotations = { 'olm.skipRange': 42 };
  const error = validationError(() => parseCsv(csv));
  t.same(
    error.issues.map((issue) => issue.field),
    ['metadata.annotations[olm.skipRange]'],
  );
  t.end();
});

void t.test('csv schema - drops unknown fields, as the API server prunes them', (t) => {
  const csv = sampleCsv();
  (csv.spec as Record<string, unknown>).notAField = true;
  const parsed = parseCsv(csv);
  t.notOk('notAField' in parsed.spec);
  t.end();
});

void t.test('csv schema - keeps the embedded deployment spec whole', (t) => {
  const parsed = parseCsv(sampleCsv());
  t.same(parsed.spec.install.spec?.deployments[0]?.spec, {
    replicas: 1,
    template: { spec: { containers: [] } },
  });
  t.end();
});

void t.test('csv schema - treats null fields as absent, as the API server does', (t) => {
  const csv = sampleCsv();
  const owned = { name: 'a.example.com', version: 'v1', kind: 'A', resources: null };
  (csv.spec as Record<string, unknown>).customresourcedefinitions = { owned: [owned] };
  const parsed = parseCsv(csv);
  t.equal(parsed.spec.customresourcedefinitions?.owned?.[0]?.resources, undefined);
  t.end();
});

void t.test('csv schema - fills strings Go would zero when a bundle omits them', (t) => {
  const csv = sampleCsv();
  const owned = {
    name: 'a.example.com',
    version: 'v1',
    kind: 'A',
    resources: [{ kind: 'Service', version: 'v1' }],
  };
  (csv.spec as Record<string, unknown>).customresourcedefinitions = { owned: [owned] };
  const parsed = parseCsv(csv);
  t.same(parsed.spec.customresourcedefinitions?.owned?.[0]?.resources, [
    { name: '', kind: 'Service', version: 'v1' },
  ]);
  t.end();
});

void t.test('csv schema - matches field names case-insensitively, as Go decodes bundles', (t) => {
  const csv = sampleCsv();
  const spec = csv.spec as Record<string, unknown>;
  spec.MinKubeVersion = '1.21.0';
  spec.customresourcedefinitions = {
    owned: [
      {
        name: 'a.example.com',
        version: 'v1',
        kind: 'A',
        resources: [{ Kind: 'Deployment', version: 'v1' }],
      },
    ],
  };
  const parsed = parseCsv(csv);
  t.equal(parsed.spec.minKubeVersion, '1.21.0');
  t.equal(parsed.spec.customresourcedefinitions?.owned?.[0]?.resources?.[0]?.kind, 'Deployment');
  t.end();
});

void t.test(
  'csv schema - an exact field name wins over a case-insensitive one that comes first',
  (t) => {
    const csv = sampleCsv();
    const spec = csv.spec as Record<string, unknown>;
    // Go assigns keys in document order; the exact key coming last is what ends up in the field.
    const reordered = { Replaces: 'old', ...spec, replaces: 'new' };
    csv.spec = reordered;
    t.equal(parseCsv(csv).spec.replaces, 'new');
    t.end();
  },
);

void t.test('csv schema - defaults a webhook containerPort to 443', (t) => {
  const csv = sampleCsv();
  (csv.spec as Record<string, unknown>).webhookdefinitions = [
    {
      generateName: 'vetcd.example.com',
      type: 'ValidatingAdmissionWebhook',
      deploymentName: 'etcd-operator',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    },
  ];
  t.equal(parseCsv(csv).spec.webhookdefinitions?.[0]?.containerPort, 443);
  t.end();
});

void t.test('csv schema - accepts an install mode type upstream accepts but does not know', (t) => {
  const csv = sampleCsv();
  (csv.spec as Record<string, unknown>).installModes = [
    { type: 'OwnNamespacejl', supported: true },
  ];
  t.equal(parseCsv(csv).spec.installModes?.[0]?.type, 'OwnNamespacejl');
  t.end();
});

void t.test('csv schema - rejects a release that is not a semver prerelease', (t) => {
  const csv = sampleCsv();
  (csv.spec as Record<string, unknown>).release = 'build 7';
  const error = validationError(() => parseCsv(csv));
  t.same(
    error.issues.map((issue) => issue.field),
    ['spec.release'],
  );
  t.end();
});
