// What one pass over an InstallPlan reads: the plan, the objects its pending steps name, the
// CSVs they resolve, and for CRD updates that change the definition the custom resources that
// must stay valid. Step objects are read fresh from the API (updates are built from them); the
// OperatorGroup's scope, which it only reads, comes from the watcher's mirror, and so does the
// absence of step objects of kinds it mirrors whole. The plan comes from the mirror when it
// shows this replica's last status write of it (the pass's own previous writes must be seen;
// only the status is written, which the trimmed metadata cannot wipe), else from the API.
import type { OperatorGroup, Subscription } from '../../../shared/api/index.js';
import type { Served } from '../../../shared/kube/served.js';
import { getMirrored, listMirrored } from '../../../shared/bus/mirror-read.js';
import type { KubeClient, KubeObject, ObjectRef } from '../../../shared/kube/client.js';
import { isNotFound } from '../../../shared/kube/errors.js';
import { manifestOf } from '../../../shared/install-plan/index.js';
import { asCrd } from '../crds.js';
import { canonicalJson } from '../hash.js';
import type { MirrorSource } from '../../../shared/bus/mirror-read.js';
import type { OwnWrites } from '../../../shared/kube/own-writes.js';
import { mirroredScope } from '../scope.js';
import { versionsServedBeforeAndAfter } from './crd-update.js';
import { stepObjectRef, stepsToRead } from './steps.js';
import type { ServedInstallPlan, PlanSnapshot } from './types.js';

const ipRef = (namespace: string, name: string) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'InstallPlan',
  namespace,
  name,
});

// Kinds the watcher mirrors whole (every object, not only olmq's). A step object of one of them
// that the mirror lacks does not exist (it is not read: most steps create), short of a create
// made in the last moment, which the step's create then meets: AlreadyExists, ours or refused
// as for any create. One the mirror has is read from the API: updates keep what it trims.
// CRDs are always read: an update is decided on their whole schema.
const mirroredWhole: ReadonlySet<string> = new Set([
  'ClusterServiceVersion',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
]);

// The plan as the mirror shows it, when that shows this replica's writes of it; else the API's.
async function readPlan(
  client: KubeClient,
  mirror: { source: MirrorSource; cluster: string; ownWrites: OwnWrites },
  namespace: string,
  name: string,
): Promise<ServedInstallPlan | undefined> {
  const where = { kind: 'InstallPlan', namespace, name };
  const mirrored = await getMirrored<ServedInstallPlan>(mirror.source, {
    cluster: mirror.cluster,
    ...where,
  });
  if (mirrored !== undefined && mirror.ownWrites.showsObject(mirror.cluster, where, mirrored))
    return mirrored;
  const plan = await client.get<ServedInstallPlan>(ipRef(namespace, name));
  mirror.ownWrites.readFromApi(mirror.cluster, namespace);
  return plan;
}

/** Reads InstallPlan `namespace/name` and what its pass needs; `now` is the clock. */
export async function loadPlan(
  client: KubeClient,
  mirror: { source: MirrorSource; cluster: string; ownWrites: OwnWrites },
  namespace: string,
  name: string,
  now: () => Date,
): Promise<PlanSnapshot> {
  const plan = await readPlan(client, mirror, namespace, name);
  const snapshot: PlanSnapshot = {
    plan,
    now: now(),
    existing: new Map(),
    csvs: new Map(),
    subscriptions: [],
    operatorGroups: [],
  };
  const phase = plan?.status?.phase;
  if (
    plan === undefined ||
    (phase !== 'Installing' && !(phase === 'RequiresApproval' && plan.spec.approved === true))
  ) {
    return snapshot;
  }
  const inNamespace = { cluster: mirror.cluster, namespace };
  const [operatorGroups, subscriptions] = await Promise.all([
    listMirrored<Served<OperatorGroup>>(mirror.source, { ...inNamespace, kind: 'OperatorGroup' }),
    // Only to label the CSVs they name (components.ts): one the mirror lags on gives none.
    listMirrored<Subscription>(mirror.source, { ...inNamespace, kind: 'Subscription' }),
  ]);
  const scope = await mirroredScope(
    mirror.source,
    client,
    mirror.cluster,
    namespace,
    operatorGroups,
  );
  if (scope !== undefined) snapshot.scope = scope;
  const read = async (ref: ObjectRef): Promise<KubeObject | undefined> => {
    if (mirroredWhole.has(ref.kind) && ref.name !== undefined) {
      const where = { cluster: mirror.cluster, kind: ref.kind, name: ref.name };
      const mirrored = await getMirrored(mirror.source, {
        ...where,
        namespace: ref.namespace ?? '',
      });
      if (mirrored === undefined) return undefined;
    }
    return client.get(ref);
  };
  const steps = plan.status?.plan ?? [];
  const existing = new Map<number, KubeObject>();
  await Promise.all(
    stepsToRead(plan.status).map(async (i) => {
      const step = steps[i];
      const ref = step === undefined ? undefined : stepObjectRef(step, namespace);
      if (ref === undefined) return;
      // A kind the cluster does not serve (a v1beta1 CRD on kube >= 1.22) has no object: the
      // step's write then fails with upstream's "resource not found" error, in the retry window.
      const object = await read(ref).catch((e: unknown) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
      if (object !== undefined) existing.set(i, object);
    }),
  );
  const csvs = new Map<string, KubeObject>();
  await Promise.all(
    [...new Set(steps.map((s) => s.resolving))].map(async (csv) => {
      const object = await read({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        namespace,
        name: csv,
      });
      if (object !== undefined) csvs.set(csv, object);
    }),
  );
  // CRD updates: the CRs of every version served before and after, to validate.
  const customResources = new Map<number, { version: string; items: KubeObject[] }[]>();
  for (const [i, crd] of existing) {
    const step = steps[i];
    if (step?.resource.kind !== 'CustomResourceDefinition') continue;
    let next: KubeObject;
    try {
      next = manifestOf(step.resource, i);
    } catch {
      continue; // the decision reports the bad manifest
    }
    // The same definition is no schema change: no CR can stop being valid (an install of the
    // same operator in another namespace only marks the CRD ours).
    if (canonicalJson(crd['spec']) === canonicalJson(next['spec'])) continue;
    const spec = asCrd(next).spec ?? {};
    const lists = await Promise.all(
      versionsServedBeforeAndAfter(crd, next).map(async (version) => ({
        version,
        items: await client
          .list({ apiVersion: `${spec.group ?? ''}/${version}`, kind: spec.names?.kind ?? '' })
          .then(
            (l) => l.items,
            (e: unknown) => {
              if (isNotFound(e)) return []; // not served yet: no CRs to keep valid
              throw e;
            },
          ),
      })),
    );
    customResources.set(i, lists);
  }
  return { ...snapshot, existing, csvs, subscriptions, operatorGroups, customResources };
}
