// The rbac function as a module: its five definitions over one shared context (the live view
// of OperatorGroups, the metrics), closed together.
import { Counter, type Registry } from 'prom-client';
import type { MirrorSource } from '../../shared/bus/mirror-read.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { lazyMirrorView } from '../../shared/bus/mirror-view.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import type { AnyFunctionDefinition } from '../../shared/runtime/types.js';
import { csvDefinition } from './csv-definition.js';
import { groupsDefinition } from './groups-definition.js';
import { namespaceDefinition } from './namespace-definition.js';
import { sweepDefinition } from './sweep-definition.js';
import { tenantsDefinition } from './tenants-definition.js';
import type { OperatorGroupObject, RbacContext } from './types.js';

/** The rbac definitions (groups, csv, namespace, tenants, sweep), and what to close after them. */
export function rbacDefinitions(
  mirror: MirrorSource,
  registry: Registry,
): { definitions: readonly AnyFunctionDefinition[]; close: () => void } {
  const written =
    (registry.getSingleMetric('olmq_rbac_writes_total') as
      Counter<'cluster' | 'kind' | 'op'> | undefined) ??
    new Counter({
      name: 'olmq_rbac_writes_total',
      help: 'Writes of the rbac function, by object kind and operation.',
      labelNames: ['cluster', 'kind', 'op'],
      registers: [registry],
    });
  // Every reconcile reads every group of the cluster (intersections, conflicts): a live view.
  const groups = lazyMirrorView<OperatorGroupObject>(mirror, 'OperatorGroup');
  // The groups' selectors and labels are matched against every namespace at each groups reconcile.
  const namespaces = lazyMirrorView<KubeObject>(mirror, 'Namespace');
  const context: RbacContext = { mirror, groups, namespaces, written };
  return {
    definitions: [
      groupsDefinition(context),
      csvDefinition(context),
      namespaceDefinition(context),
      tenantsDefinition(context),
      sweepDefinition(context),
    ],
    close: () => {
      groups.stop();
      namespaces.stop();
    },
  };
}

/** The rbac function module. */
export const createFunction: CreateFunction = (context) => {
  const { definitions, close } = rbacDefinitions(context.backbone, context.registry);
  return Promise.resolve({ definitions, close: () => Promise.resolve(close()) });
};
