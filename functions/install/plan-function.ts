// The InstallPlan half of the install function: one work item per InstallPlan; load reads the
// plan and the objects its pending steps name from the API (fresh: the plan's own writes must
// be seen by the next pass), decide is plan-execution.ts, apply writes step by step and
// records the outcome in the plan status.
import type { Counter } from 'prom-client';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { ApiWarning } from '../../shared/kube/warnings.js';
import { isConflict, isNotFound, KubeApiError } from '../../shared/kube/errors.js';
import { executeWrites, OwnershipConflictError } from '../../shared/kube/executor.js';
import {
  StaleDecisionError,
  type FunctionDefinition,
  type WorkContext,
} from '../../shared/runtime/function-host.js';
import {
  appliedWithWarningsEvent,
  decidePlan,
  resourceNotFoundMessage,
  settlePlan,
  statusChanged,
  stepObjectRef,
  stepsToRead,
  versionsServedBeforeAndAfter,
  type InstallPlanObject,
  type PlanError,
  type PlanSnapshot,
  type PlanWrites,
} from './plan-execution.js';
import { manifestOf } from '../../shared/install-plan/index.js';
import { operatorGroupScope, type ScopedClients } from './scope.js';

/** Field manager of the install function's writes. */
export const installFieldManager = 'olmq-install';

const ipRef = (namespace: string, name: string) => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'InstallPlan',
  namespace,
  name,
});

/** Turns a failed step write into the error the plan records (upstream's wording). */
export function planErrorOf(
  error: unknown,
  write: { step: number; object?: KubeObject },
): PlanError {
  if (error instanceof KubeApiError) {
    if (error.reason === 'Forbidden')
      return { message: error.message, forbidden: true, step: write.step };
    if (isNotFound(error) && write.object !== undefined) {
      const o = write.object;
      return {
        message: resourceNotFoundMessage(o.kind, o.metadata.name ?? '', o.apiVersion),
        forbidden: false,
        step: write.step,
      };
    }
    return { message: error.message, forbidden: false, step: write.step };
  }
  if (error instanceof OwnershipConflictError)
    return { message: error.message, forbidden: false, step: write.step };
  throw error; // not a Kubernetes answer: let the host retry with backoff
}

/** The InstallPlan function over `clients` (by cluster id). */
export function installPlanFunction(options: {
  clients: ReadonlyMap<string, KubeClient>;
  scoped: ScopedClients;
  warnings?: Counter;
  now?: () => Date;
}): FunctionDefinition<PlanSnapshot, PlanWrites> {
  const now = options.now ?? (() => new Date());
  const clientOf = (cluster: string): KubeClient => {
    const client = options.clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  // Upstream: one Event and one installplan_warnings_total count per step that drew warnings.
  const recordWarnings = async (
    plan: InstallPlanObject,
    step: number,
    warnings: readonly string[],
    work: WorkContext,
  ): Promise<void> => {
    options.warnings?.inc();
    const event = appliedWithWarningsEvent(plan, step, warnings, now());
    work.log.info({ step, warnings }, 'install plan step applied with warnings');
    try {
      await executeWrites(
        clientOf(work.cluster),
        [{ op: 'event', object: event }],
        installFieldManager,
      );
    } catch (e) {
      work.log.warn({ step, err: e }, 'recording the AppliedWithWarnings Event failed');
    }
  };
  return {
    name: 'install-plan',
    triggers: [
      {
        kind: 'InstallPlan',
        workKeys: (c) => [[c.ref.namespace, c.ref.name]],
      },
    ],
    async load(work: WorkContext): Promise<PlanSnapshot> {
      const [namespace = '', name = ''] = work.key;
      const client = clientOf(work.cluster);
      const plan = await client.get<InstallPlanObject>(ipRef(namespace, name));
      const snapshot: PlanSnapshot = { plan, now: now(), existing: new Map(), csvs: new Map() };
      const phase = plan?.status?.phase;
      if (
        plan === undefined ||
        (phase !== 'Installing' && !(phase === 'RequiresApproval' && plan.spec.approved === true))
      ) {
        return snapshot;
      }
      const scope = await operatorGroupScope(client, namespace);
      if (scope !== undefined) snapshot.scope = scope;
      const steps = plan.status?.plan ?? [];
      const existing = new Map<number, KubeObject>();
      await Promise.all(
        stepsToRead(plan.status).map(async (i) => {
          const step = steps[i];
          const ref = step === undefined ? undefined : stepObjectRef(step, namespace);
          if (ref === undefined) return;
          const object = await client.get(ref);
          if (object !== undefined) existing.set(i, object);
        }),
      );
      const csvs = new Map<string, KubeObject>();
      await Promise.all(
        [...new Set(steps.map((s) => s.resolving))].map(async (csv) => {
          const object = await client.get({
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
        const spec = (next['spec'] ?? {}) as { group?: string; names?: { kind?: string } };
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
      return { ...snapshot, existing, csvs, customResources };
    },
    decide: decidePlan,
    async apply(writes: PlanWrites, work: WorkContext): Promise<void> {
      if (writes.plan === undefined || writes.status === undefined) return;
      const client = clientOf(work.cluster);
      const scopedClient =
        writes.status.attenuatedServiceAccountRef === undefined
          ? client
          : options.scoped.clientFor(
              client,
              writes.plan.metadata.namespace ?? '',
              writes.status.attenuatedServiceAccountRef.name ?? '',
            );
      // API warnings (HTTP 299) are attributed to the step whose writes drew them.
      let warnings: string[] = [];
      const collect = (warning: ApiWarning): void => {
        if (warning.code === 299) warnings.push(warning.text);
      };
      const writer = client.withWarningHandler(collect);
      const scopedWriter =
        scopedClient === client ? writer : scopedClient.withWarningHandler(collect);
      let succeeded = 0;
      let error: PlanError | undefined;
      for (const w of writes.steps) {
        warnings = [];
        try {
          await executeWrites(w.scoped ? scopedWriter : writer, [w.write], installFieldManager);
          succeeded++;
        } catch (e) {
          if (e instanceof StaleDecisionError || isConflict(e)) throw e; // re-read and decide again
          error = planErrorOf(e, {
            step: w.step,
            ...('object' in w.write ? { object: w.write.object } : {}),
          });
          work.log.info({ step: w.step, err: e }, 'install plan step failed');
          break;
        } finally {
          if (warnings.length > 0) await recordWarnings(writes.plan, w.step, warnings, work);
        }
      }
      const status = settlePlan(
        writes,
        { succeeded, ...(error === undefined ? {} : { error }) },
        now(),
      );
      if (status === undefined || !statusChanged(writes.plan.status, status)) return;
      try {
        await client.updateStatus({ ...writes.plan, status });
      } catch (e) {
        if (isConflict(e))
          throw new StaleDecisionError(`InstallPlan status: ${(e as Error).message}`, { cause: e });
        throw e;
      }
    },
  };
}
