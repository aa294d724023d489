// Real data: the CRDs and alm-examples of the six complete packages in catalogs/example.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import t from 'tap';
import type { JsonObject } from '../../shared/kube/json.js';
import { isJsonObject } from '../../shared/kube/json.js';
import {
  applyDefaults,
  formatCause,
  prune,
  validateAgainstSchema,
  validateCustomResourceDefinition,
} from '../../shared/kube/schema/index.js';
import { smallCatalog } from '../harness/repo.js';

const catalogRoot = smallCatalog;

interface Bundle {
  name: string;
  objects: JsonObject[];
}

function readBundles(): Bundle[] {
  const bundles: Bundle[] = [];
  for (const pkg of readdirSync(catalogRoot)) {
    const file = `${catalogRoot}/${pkg}/catalog.json`;
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const entry = JSON.parse(line) as {
        schema?: string;
        name?: string;
        properties?: { type: string; value: { data?: string } }[];
      };
      if (entry.schema !== 'olm.bundle') continue;
      const objects = (entry.properties ?? [])
        .filter((p) => p.type === 'olm.bundle.object' && typeof p.value.data === 'string')
        .map(
          (p) =>
            JSON.parse(Buffer.from(p.value.data ?? '', 'base64').toString('utf8')) as JsonObject,
        );
      bundles.push({ name: entry.name ?? '', objects });
    }
  }
  return bundles;
}

const skip = existsSync(catalogRoot) ? false : `catalog data not found at ${catalogRoot}`;
const bundles = skip === false ? readBundles() : [];
const isCRD = (o: JsonObject): boolean => o.kind === 'CustomResourceDefinition';
const v1CRDs = (b: Bundle): JsonObject[] =>
  b.objects.filter((o) => isCRD(o) && o.apiVersion === 'apiextensions.k8s.io/v1');

void t.test(
  'catalog - every apiextensions.k8s.io/v1 CRD of catalogs/small is valid',
  { skip },
  (t) => {
    let checked = 0;
    let v1beta1 = 0;
    const failures: string[] = [];
    for (const bundle of bundles) {
      v1beta1 += bundle.objects.filter(
        (o) => isCRD(o) && o.apiVersion === 'apiextensions.k8s.io/v1beta1',
      ).length;
      for (const crd of v1CRDs(bundle)) {
        checked++;
        const causes = validateCustomResourceDefinition(crd).map(formatCause);
        if (causes.length > 0) failures.push(`${bundle.name}: ${causes.join('; ')}`);
      }
    }
    t.same(failures, []);
    t.equal(checked, 105, 'v1 CRDs checked');
    t.equal(v1beta1, 28, 'v1beta1 CRDs skipped');
    t.end();
  },
);

function schemaFor(crds: JsonObject[], apiVersion: string, kind: string): JsonObject | undefined {
  const [group, version] = apiVersion.split('/');
  for (const crd of crds) {
    const spec = crd.spec as JsonObject;
    if (spec.group !== group || (spec.names as JsonObject).kind !== kind) continue;
    const versions = (spec.versions as JsonObject[]).filter((v) => v.name === version);
    const found = versions[0]?.schema;
    if (isJsonObject(found) && isJsonObject(found.openAPIV3Schema)) return found.openAPIV3Schema;
  }
  return undefined;
}

void t.test(
  'catalog - alm-examples validate against their v1 CRD after pruning and defaulting',
  { skip },
  (t) => {
    let checked = 0;
    let withoutV1CRD = 0;
    const failures: string[] = [];
    for (const bundle of bundles) {
      const crds = v1CRDs(bundle);
      for (const csv of bundle.objects.filter((o) => o.kind === 'ClusterServiceVersion')) {
        const annotations = (csv.metadata as JsonObject).annotations as JsonObject | undefined;
        const raw = annotations?.['alm-examples'];
        if (typeof raw !== 'string') continue;
        for (const example of JSON.parse(raw) as { apiVersion: string; kind: string }[]) {
          const schema = schemaFor(crds, example.apiVersion, example.kind);
          if (schema === undefined) {
            withoutV1CRD++;
            continue;
          }
          checked++;
          const pruned = prune(example, schema);
          const causes = validateAgainstSchema(applyDefaults(pruned.value, schema), schema);
          for (const field of pruned.unknownFields)
            failures.push(`${bundle.name} ${example.kind}: unknown field "${field}"`);
          for (const cause of causes)
            failures.push(`${bundle.name} ${example.kind}: ${formatCause(cause)}`);
        }
      }
    }
    t.equal(checked, 105, 'examples checked');
    t.equal(withoutV1CRD, 27, 'examples whose CRD is v1beta1 (etcd, old prometheus) were skipped');
    // hawtio 1.0.x ship `"version": 1.12` for a string field; kube-apiserver rejects those too.
    t.same(failures, [
      'hawtio-operator.v1.0.0 Hawtio: spec.version: Invalid value: "number": spec.version in body must be of type string: "number"',
      'hawtio-operator.v1.0.1 Hawtio: spec.version: Invalid value: "number": spec.version in body must be of type string: "number"',
    ]);
    t.end();
  },
);
