// The install function: InstallPlan execution (upstream's catalog operator ExecutePlan), the
// ClusterServiceVersion lifecycle (upstream's olm-operator), OperatorConditions (upstream's
// operator-condition generator and controller) and the retry of CSVs failed for good on RBAC
// changes, as definitions keyed per InstallPlan, per namespace of CSVs and per CSV name.
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import { csvFunction } from './csv/index.js';
import { installPlanFunction } from './install-plan/index.js';
import { createInstallMetrics } from './metrics.js';
import { operatorConditionFunction } from './operator-conditions/index.js';
import { parseInstallOptions } from './options.js';
import { rbacRetryFunction } from './rbac-retry/index.js';
import { ScopedClients } from './scope.js';

/** The install function with `options` (see options.ts; validated here, before anything starts). */
export function installFunction(options: unknown = {}): CreateFunction {
  const { certificateLifetimeMs, installPlanRetryTimeoutMs } = parseInstallOptions(options);
  return (context) => {
    const metrics = createInstallMetrics(context.registry);
    const scoped = new ScopedClients();
    const retry = rbacRetryFunction({ mirror: context.backbone });
    const csv = csvFunction({
      scoped,
      metrics,
      certificateLifetimeMs,
      mirror: context.backbone,
    });
    return Promise.resolve({
      definitions: [
        installPlanFunction({
          scoped,
          warnings: metrics.installPlanWarnings,
          retryWindowMs: installPlanRetryTimeoutMs,
          mirror: context.backbone,
        }),
        csv,
        operatorConditionFunction({ mirror: context.backbone }),
        retry,
      ],
      close() {
        scoped.close();
        retry.close();
        csv.close();
        return Promise.resolve();
      },
    });
  };
}

export const createFunction: CreateFunction = installFunction();
