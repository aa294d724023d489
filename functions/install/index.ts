// The install function: InstallPlan execution (upstream's catalog operator ExecutePlan) and
// the ClusterServiceVersion lifecycle (upstream's olm-operator), as definitions keyed per
// InstallPlan and per namespace of CSVs, plus the retry of CSVs failed for good on RBAC changes.
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import { csvFunction } from './csv-function.js';
import { createInstallMetrics } from './metrics.js';
import { installPlanFunction } from './plan-function.js';
import { rbacRetryFunction } from './rbac-retry.js';
import { ScopedClients } from './scope.js';

export const createFunction: CreateFunction = (context) => {
  const metrics = createInstallMetrics(context.registry);
  const scoped = new ScopedClients();
  return Promise.resolve({
    definitions: [
      installPlanFunction({
        clients: context.clients,
        scoped,
        warnings: metrics.installPlanWarnings,
      }),
      csvFunction({ clients: context.clients, scoped, metrics }),
      rbacRetryFunction({ clients: context.clients, mirror: context.backbone }),
    ],
    close() {
      scoped.close();
      return Promise.resolve();
    },
  });
};
