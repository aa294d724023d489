// The steps of an InstallPlan, as upstream's catalog operator writes them: per bundle its CSV
// (in the plan's namespace, spec.replaces set from the resolution, properties annotation added) and its other objects
// (a Secret becomes kind BundleSecret) and the RBAC of its permissions, plus a Subscription
// step for a dependency no Subscription asks for; then ordered CSVs first, then CRDs, then the
// rest (upstream's OrderSteps). Pure.
import type { Step } from '../api/index.js';
import { codes } from '../api/index.js';
import type { BundleManifests, BundleObject } from '../catalog/index.js';
import type { RecordedBundle } from '../resolver/record.js';
import { declaredCsvFields } from './csv-fields.js';
import { rbacForCsv } from './permissions.js';
import { groupVersionOf, stepKindOf } from './step-resource.js';

/** A bundle to install and its manifests. */
export interface PlannedBundle {
  bundle: RecordedBundle;
  manifests: BundleManifests;
}

/** A bundle's manifests lack what a step needs (a person must fix the catalog). */
export class BundleManifestError extends Error {
  readonly retryable = false;
  constructor(
    readonly bundle: string,
    detail: string,
  ) {
    super(`bundle ${bundle} cannot be planned: ${detail}`);
    this.name = 'BundleManifestError';
  }
}

function nameOf(object: BundleObject): string {
  const metadata = object['metadata'] as { name?: unknown } | undefined;
  return typeof metadata?.name === 'string' ? metadata.name : '';
}

/**
 * The CSV as installed, as upstream's NewStepResourceFromBundle makes it: in the plan's namespace
 * (bundles often say `placeholder`), spec.replaces the installed CSV it upgrades or else the
 * catalog's replaces edge for it, and the bundle's properties recorded on it.
 */
function plannedCsv(planned: PlannedBundle, namespace: string): BundleObject {
  if (planned.manifests.csv === undefined)
    throw new BundleManifestError(planned.bundle.name, 'it has no ClusterServiceVersion');
  const csv = declaredCsvFields(planned.manifests.csv);
  const metadata = (csv['metadata'] ?? {}) as Record<string, unknown>;
  const spec = { ...((csv['spec'] ?? {}) as Record<string, unknown>) };
  const replaces = planned.bundle.replaces ?? planned.bundle.channelReplaces ?? null;
  if (replaces === null) delete spec['replaces'];
  else spec['replaces'] = replaces;
  // Upstream's typed CSV always serialises spec.cleanup and status.cleanup (status is dropped
  // when the CSV is written).
  spec['cleanup'] ??= { enabled: false };
  // ... and each API resource reference's name, empty when the bundle leaves it out.
  for (const field of ['customresourcedefinitions', 'apiservicedefinitions']) {
    const apis = spec[field] as Record<string, unknown> | undefined;
    if (apis === undefined) continue;
    const named = { ...apis };
    for (const which of ['owned', 'required']) {
      const list = named[which];
      if (!Array.isArray(list)) continue;
      named[which] = list.map((d: Record<string, unknown>) =>
        Array.isArray(d['resources'])
          ? {
              ...d,
              resources: (d['resources'] as Record<string, unknown>[]).map((r) => ({
                ...r,
                name: r['name'] ?? '',
              })),
            }
          : d,
      );
    }
    spec[field] = named;
  }
  const status = (csv['status'] ?? {}) as Record<string, unknown>;
  return {
    ...csv,
    metadata: {
      ...metadata,
      namespace,
      annotations: {
        ...((metadata['annotations'] ?? {}) as Record<string, string>),
        [codes.OlmAnnotation.Properties]: goJson({ properties: planned.bundle.properties }),
      },
    },
    spec,
    status: { ...status, cleanup: status['cleanup'] ?? {} },
  };
}

/**
 * JSON as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. Upstream
 * marshals the properties annotation so, and a versionRange such as `>2.0.0` shows as
 * `\u003e2.0.0` in it.
 */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Upstream's name of a Subscription created for a dependency. */
export function dependencySubscriptionName(b: RecordedBundle): string {
  return `${b.package}-${b.channel ?? ''}-${b.catalog.name}-${b.catalog.namespace}`;
}

// `typeMeta: false` leaves apiVersion and kind out of the manifest, as upstream serialises the
// RBAC and Subscriptions it generates (typed objects without TypeMeta); the step's group,
// version and kind say them.
function step(b: RecordedBundle, object: BundleObject, typeMeta = true): Step {
  const { group, version } = groupVersionOf(object['apiVersion']);
  const { apiVersion: _apiVersion, kind: _kind, ...untyped } = object;
  return {
    resolving: b.name,
    resource: {
      sourceName: b.catalog.name,
      sourceNamespace: b.catalog.namespace,
      group,
      version,
      kind: stepKindOf(typeof object['kind'] === 'string' ? object['kind'] : ''),
      name: nameOf(object),
      manifest: JSON.stringify(typeMeta ? object : untyped),
    },
    status: codes.StepStatus.Unknown,
  };
}

/** The ordered steps installing `bundles` into `namespace`. */
export function planSteps(namespace: string, bundles: readonly PlannedBundle[]): Step[] {
  const csvs: Step[] = [];
  const crds: Step[] = [];
  const rest: Step[] = [];
  for (const planned of bundles) {
    const b = planned.bundle;
    const csv = plannedCsv(planned, namespace);
    csvs.push(step(b, csv));
    for (const object of planned.manifests.others) {
      if (object['kind'] === 'CustomResourceDefinition') crds.push(step(b, object));
      else rest.push(step(b, object));
    }
    // The RBAC of the CSV's install strategy, as upstream plans it.
    for (const object of rbacForCsv(csv, namespace)) {
      rest.push(step(b, object, false));
    }
    if (b.subscription === null) {
      // Untyped, with the zero status upstream's typed Subscription serialises.
      rest.push(
        step(
          b,
          {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'Subscription',
            metadata: { name: dependencySubscriptionName(b), namespace },
            spec: {
              source: b.catalog.name,
              sourceNamespace: b.catalog.namespace,
              name: b.package,
              ...(b.channel === null ? {} : { channel: b.channel }),
              startingCSV: b.name,
              installPlanApproval: codes.Approval.Automatic,
            },
            status: { lastUpdated: null },
          },
          false,
        ),
      );
    }
  }
  return [...csvs, ...crds, ...rest];
}
