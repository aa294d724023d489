// The operator function: the Operator API (see README.md). Two definitions, one per work-key
// type: a namespace's adoption (component labels) and one Operator's object and status.
import type { Operator } from '../../shared/api/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { getMirrored, listMirrored } from '../../shared/bus/mirror-read.js';
import { lazyMirrorView } from '../../shared/bus/mirror-view.js';
import type { KubeClient, KubeObject, ObjectRef } from '../../shared/kube/client.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { executeWrite, executeWrites, type WriteObserver } from '../../shared/kube/executor.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { unlessOwnWrite } from '../../shared/runtime/own-write-triggers.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import type {
  FunctionDefinition,
  ObjectChange,
  Trigger,
  WorkItem,
} from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { decideAdoption, type AdoptionSnapshot, type LabelPatch } from './adopt.js';
import { decideOperator, type OperatorDecision, type OperatorSnapshot } from './components.js';
import { adoptionKey, operatorKey } from './keys.js';
import { componentIndex, ownerNamespaces, type ComponentIndex } from './component-index.js';
import {
  componentLabelKey,
  operatorNames,
  ownableKinds,
} from '../../shared/api/component-labels.js';
import { Memberships, adoptionParts, crdNamespaces, statusParts, wokenOperators } from './wakes.js';

const fieldManager = 'olmq-operator';

const operatorItem = (name: string): WorkItem => operatorKey.of({ name });
const adoptionItem = (namespace: string): WorkItem => adoptionKey.of({ namespace });

const asObject = (change: ObjectChange): KubeObject | undefined =>
  change.object as KubeObject | undefined;

// An install changes a dozen of an Operator's components within a few hundred ms, each change
// waking both definitions: they reconcile once the namespace or Operator has been quiet this
// long, labelling and summing up the whole burst in one pass instead of one per change.
const quietMs = 100;

export const createFunction: CreateFunction = (context) => {
  const { backbone } = context;
  const index = componentIndex(backbone);
  const memberships = new Memberships();
  // What this replica wrote of Operators, so a load can tell whether the mirror shows it.
  const ownWrites = new OwnWrites();

  // A deleted component concerns the Operators whose status lists it.
  const operators = lazyMirrorView<Operator>(backbone, 'Operator');
  const listingOperators = async (change: ObjectChange): Promise<string[]> => {
    const { cluster, kind, namespace, name } = change.ref;
    return (await operators.list(cluster, ''))
      .filter((op) =>
        (op.status?.components?.refs ?? []).some(
          (r) => r.kind === kind && (r.namespace ?? '') === namespace && r.name === name,
        ),
      )
      .map((op) => op.metadata.name ?? '');
  };

  // Every kind's trigger: its Operators (by label) when what their status shows of it may have
  // changed, and the adoption it concerns when what adoption reads of it may have.
  const trigger = (
    kind: string,
    adoption: (o: KubeObject, change: ObjectChange) => readonly string[],
  ): Trigger => {
    const shown = statusParts(kind);
    const adopted = adoptionParts(kind);
    return {
      kind,
      parts: [...new Set([...shown, ...adopted])],
      async workKeys(change) {
        const o = asObject(change);
        if (o === undefined) {
          memberships.forget(change.ref);
          return (await listingOperators(change)).map(operatorItem);
        }
        const now = operatorNames(o.metadata.labels);
        // Memberships are recorded when looked at, views only once the work is published: a
        // change looked at again (its work not published) is judged as not remembered.
        const names = (list: readonly string[]): string => [...list].sort().join(' ');
        const moved = change.differs('operators', names(now));
        const remembered = memberships.swap(change.ref, now);
        const then =
          moved && remembered !== undefined && names(remembered) === names(now)
            ? undefined
            : remembered;
        let woken = wokenOperators(now, then, change, shown);
        // Not remembered: it may have lost a label since an Operator listed it.
        if (then === undefined && change.touches(shown))
          woken = [...new Set([...woken, ...(await listingOperators(change))])];
        const items = woken.map(operatorItem);
        if (change.touches(adopted))
          for (const ns of adoption(o, change)) if (ns !== '') items.push(adoptionItem(ns));
        return items;
      },
    };
  };
  const own = (_o: KubeObject, c: ObjectChange): string[] => [c.ref.namespace];
  const owner = (o: KubeObject): string[] => ownerNamespaces(o);
  const none = (): string[] => [];

  const adoption: FunctionDefinition<FieldKey<'namespace'>, AdoptionSnapshot, LabelPatch[]> = {
    key: adoptionKey,
    triggers: [
      trigger('Subscription', own),
      trigger('InstallPlan', own),
      trigger('ClusterServiceVersion', own),
      trigger('CustomResourceDefinition', crdNamespaces),
      ...ownableKinds.map((kind) => trigger(kind, owner)),
      trigger('Namespace', none),
    ],
    quietMs,
    load: (work) => loadAdoption(backbone, index, work.cluster, work.key.namespace),
    decide: (snapshot) => ({ writes: decideAdoption(snapshot) }),
    async apply(patches, work) {
      for (const p of patches) {
        try {
          await executeWrites(
            work.client,
            [{ op: 'patch', ref: p.ref, type: 'merge', patch: { metadata: { labels: p.labels } } }],
            fieldManager,
          );
        } catch (error) {
          // Gone since it was read: nothing to label.
          if (!isNotFound(error)) throw error;
        }
      }
    },
  };

  const operator: FunctionDefinition<FieldKey<'name'>, OperatorSnapshot, OperatorDecision> = {
    key: operatorKey,
    // Its own status writes wake nothing, nor its create coming back; a deletion (always a
    // change) brings it back.
    triggers: [
      unlessOwnWrite(
        {
          kind: 'Operator',
          parts: ['metadata', 'spec'],
          workKeys: (c) => [operatorItem(c.ref.name)],
        },
        ownWrites,
      ),
    ],
    quietMs,
    load: (work) =>
      loadOperator({ backbone, index, ownWrites }, work.client, work.cluster, work.key.name),
    decide: (snapshot) => ({ writes: decideOperator(snapshot) }),
    apply: (decision, work) =>
      ownWrites.recording({ cluster: work.cluster, namespace: '' }, ['Operator'], (observe) =>
        writeOperator(work.client, decision, observe),
      ),
  };

  return Promise.resolve({
    definitions: [adoption, operator],
    close: () => {
      index.stop();
      operators.stop();
      return Promise.resolve();
    },
  });
};

/**
 * Makes an Operator's writes; a new Operator's status is written on the version its create
 * answered with (that of an Operator found there already, if so), conditional on it.
 */
async function writeOperator(
  client: KubeClient,
  decision: OperatorDecision,
  observe: WriteObserver,
): Promise<void> {
  for (const write of decision.writes) {
    const answer = await executeWrite(client, write, fieldManager, observe);
    if (write.op !== 'create' || decision.statusOfCreated === undefined || answer === undefined)
      continue;
    const object = { ...write.object, metadata: answer.metadata, status: decision.statusOfCreated };
    await executeWrite(client, { op: 'updateStatus', object }, fieldManager, observe);
  }
}

/** Reads one namespace's adoption from the mirror. */
export async function loadAdoption(
  backbone: Backbone,
  index: ComponentIndex,
  cluster: string,
  namespace: string,
): Promise<AdoptionSnapshot> {
  const mirrored = (kind: string): Promise<KubeObject[]> =>
    listMirrored<KubeObject>(backbone, { cluster, kind, namespace });
  const [subscriptions, installPlans, csvs, candidates] = await Promise.all([
    mirrored('Subscription'),
    mirrored('InstallPlan'),
    mirrored('ClusterServiceVersion'),
    index.ownedFrom(cluster, namespace),
  ]);
  const crdNames = new Set(
    csvs.flatMap((csv) =>
      (
        (csv['spec'] as { customresourcedefinitions?: { owned?: { name?: string }[] } })
          ?.customresourcedefinitions?.owned ?? []
      ).map((d) => d.name ?? ''),
    ),
  );
  const crds = (
    await Promise.all(
      [...crdNames].map((name) =>
        getMirrored<KubeObject>(backbone, {
          cluster,
          kind: 'CustomResourceDefinition',
          namespace: '',
          name,
        }),
      ),
    )
  ).flatMap((c) => (c === undefined ? [] : [c]));
  return { namespace, subscriptions, installPlans, csvs, candidates, crds };
}

/**
 * Reads one Operator and its components from the mirror; the Operator from the API when the
 * mirror does not show this replica's last write of it yet or a status write of an Operator
 * conflicted since.
 */
export async function loadOperator(
  from: { backbone: Backbone; index: ComponentIndex; ownWrites: OwnWrites },
  client: KubeClient,
  cluster: string,
  name: string,
): Promise<OperatorSnapshot> {
  const where = { kind: 'Operator', namespace: '', name };
  const [mirrored, components] = await Promise.all([
    getMirrored<KubeObject>(from.backbone, { cluster, ...where }),
    from.index.components(cluster, componentLabelKey(name)),
  ]);
  let operator = mirrored;
  if (!from.ownWrites.showsObject(cluster, where, mirrored)) {
    const ref: ObjectRef = { apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name };
    operator = await client.get<KubeObject>(ref);
    from.ownWrites.readFromApi(cluster, '');
  }
  return { name, operator: operator as Operator | undefined, components };
}
