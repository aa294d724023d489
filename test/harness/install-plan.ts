// Test-side builder of InstallPlans shaped as upstream's catalog operator writes them, from real
// bundles of catalogs/example: one plan step per object (CSV first, then CRDs, then the
// rest, as upstream's OrderSteps), with the RBAC steps upstream derives from the CSV's
// permissions. Tests of the install function create plans with it; the plan function's tests
// can compare against it.
import { join } from 'node:path';
import {
  decodeBundleManifests,
  loadCatalogDirectory,
  type BundleObject,
} from '../../shared/catalog/index.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { InstallPlanStatus, Step } from '../../shared/api/installplan.js';
import { smallCatalog } from './repo.js';
import { rbacForCsv } from '../../shared/install-plan/index.js';

/** A bundle's decoded manifests. */
export interface TestBundle {
  csv: KubeObject;
  others: KubeObject[];
}

const catalogs = new Map<string, ReturnType<typeof loadCatalogDirectory>>();

/** The bundle `csvName` of package directory `pkg` in catalogs/example. */
export async function smallBundle(pkg: string, csvName: string): Promise<TestBundle> {
  let built = catalogs.get(pkg);
  if (built === undefined) {
    built = loadCatalogDirectory(join(smallCatalog, pkg));
    catalogs.set(pkg, built);
  }
  const { content } = await built;
  const bundle = content.get(pkg, csvName);
  if (bundle === undefined) throw new Error(`no bundle ${csvName} in package ${pkg}`);
  const manifests = decodeBundleManifests(bundle);
  if (manifests.csv === undefined) throw new Error(`bundle ${csvName} has no CSV`);
  const copy = (o: BundleObject): KubeObject => structuredClone(o) as unknown as KubeObject;
  return { csv: copy(manifests.csv), others: manifests.others.map(copy) };
}

/** Where a plan's bundle came from. */
export interface PlannedBundle extends TestBundle {
  sourceName?: string;
  sourceNamespace?: string;
  /** Overrides the CSV's spec.replaces (upstream writes the installed CSV it upgrades). */
  replaces?: string;
}

function stepFor(
  object: KubeObject,
  resolving: string,
  sourceName: string,
  sourceNamespace: string,
): Step {
  const [group, version] = object.apiVersion.includes('/')
    ? (object.apiVersion.split('/') as [string, string])
    : ['', object.apiVersion];
  const kind = object.kind === 'Secret' ? 'BundleSecret' : object.kind;
  return {
    resolving,
    resource: {
      group,
      version,
      kind,
      name: object.metadata.name ?? '',
      manifest: JSON.stringify(object),
      sourceName,
      sourceNamespace,
    },
    status: 'Unknown',
  };
}

/** The steps of a plan for `bundles` into `namespace`, in upstream's order. */
export function planSteps(bundles: readonly PlannedBundle[], namespace: string): Step[] {
  const csvs: Step[] = [];
  const crds: Step[] = [];
  const rest: Step[] = [];
  for (const b of bundles) {
    const csv = structuredClone(b.csv);
    const name = csv.metadata.name ?? '';
    const source = b.sourceName ?? 'community';
    const sourceNs = b.sourceNamespace ?? 'olm';
    csv.metadata.namespace = namespace;
    const spec = csv['spec'] as Record<string, unknown>;
    if (b.replaces !== undefined) spec['replaces'] = b.replaces;
    csvs.push(stepFor(csv, name, source, sourceNs));
    for (const o of b.others) {
      const step = stepFor(o, name, source, sourceNs);
      if (o.kind === 'CustomResourceDefinition') crds.push(step);
      else rest.push(step);
    }
    for (const o of rbacForCsv(csv, namespace)) rest.push(stepFor(o, name, source, sourceNs));
  }
  return [...csvs, ...crds, ...rest];
}

/** Options of a test InstallPlan. */
/** `bundle` with a validating webhook whose rule targets the OLM group (upstream refuses it). */
export function withOlmGroupWebhook(bundle: TestBundle): TestBundle {
  const hooked = structuredClone(bundle);
  (hooked.csv['spec'] as Record<string, unknown>)['webhookdefinitions'] = [
    {
      generateName: 'vcsv.example.com',
      type: 'ValidatingAdmissionWebhook',
      deploymentName: 'etcd-operator',
      containerPort: 443,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      rules: [
        {
          apiGroups: ['operators.coreos.com'],
          apiVersions: ['*'],
          operations: ['CREATE'],
          resources: ['*'],
        },
      ],
    },
  ];
  return hooked;
}

export interface InstallPlanOptions {
  name: string;
  namespace: string;
  bundles: readonly PlannedBundle[];
  approval?: 'Automatic' | 'Manual';
  generation?: number;
}

/** The InstallPlan object and the status upstream's planner writes with it. */
export function installPlanFor(options: InstallPlanOptions): {
  plan: KubeObject;
  status: InstallPlanStatus;
} {
  const approval = options.approval ?? 'Automatic';
  const plan: KubeObject = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'InstallPlan',
    metadata: { name: options.name, namespace: options.namespace },
    spec: {
      clusterServiceVersionNames: options.bundles.map((b) => b.csv.metadata.name ?? ''),
      approval,
      approved: approval === 'Automatic',
      generation: options.generation ?? 1,
    },
  };
  const sources = new Set(
    options.bundles.map((b) => `${b.sourceNamespace ?? 'olm'}/${b.sourceName ?? 'community'}`),
  );
  return {
    plan,
    status: {
      phase: approval === 'Automatic' ? 'Installing' : 'RequiresApproval',
      catalogSources: [...sources].map((s) => s.split('/')[1] ?? ''),
      plan: planSteps(options.bundles, options.namespace),
    },
  };
}

/** Creates the plan and writes its status (the status subresource), as the planner does. */
export async function createInstallPlan(
  client: KubeClient,
  options: InstallPlanOptions,
): Promise<KubeObject> {
  const { plan, status } = installPlanFor(options);
  const created = await client.create(plan);
  return client.updateStatus({ ...created, status });
}

/** The etcdclusters CRD with spec.size required to be an integer (a stricter update). */
export function restrictSize(crd: KubeObject): KubeObject {
  const next = structuredClone(crd);
  const spec = next['spec'] as {
    versions: { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[];
  };
  for (const v of spec.versions) {
    v.schema.openAPIV3Schema.properties['spec'] = {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { size: { type: 'integer' } },
    };
  }
  return next;
}
