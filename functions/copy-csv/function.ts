// The copy-csv function as a module: its three definitions over one shared context (the live
// view of OperatorGroups, the metrics), closed together.
import { Counter, type Registry } from 'prom-client';
import type { MirrorSource } from '../../shared/bus/mirror-read.js';
import { lazyMirrorView } from '../../shared/bus/mirror-view.js';
import type { OperatorGroupLike } from '../../shared/operator-group/index.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import type { AnyFunctionDefinition } from '../../shared/runtime/types.js';
import { namespaceDefinition } from './namespace-definition.js';
import { olmConfigDefinition } from './olmconfig-definition.js';
import { sourceDefinition } from './source-definition.js';
import type { CopyCsvContext, CopyCsvOptions } from './types.js';

/** Defaults of CopyCsvOptions. */
export const defaultCopyCsvOptions: CopyCsvOptions = { protectedNamespaces: [] };

/** The copy-csv definitions (namespace, source, olmconfig), and what to close after them. */
export function copyCsvDefinitions(
  mirror: MirrorSource,
  registry: Registry,
  options: CopyCsvOptions = defaultCopyCsvOptions,
): { definitions: readonly AnyFunctionDefinition[]; close: () => void } {
  const copiesWritten =
    (registry.getSingleMetric('olmq_copied_csv_writes_total') as
      Counter<'cluster' | 'operation'> | undefined) ??
    new Counter({
      name: 'olmq_copied_csv_writes_total',
      help: 'Copied CSVs created, updated and deleted.',
      labelNames: ['cluster', 'operation'],
      registers: [registry],
    });
  // Every namespace's reconcile reads every group of the cluster (who targets it): a live view.
  const groups = lazyMirrorView<OperatorGroupLike>(mirror, 'OperatorGroup');
  const context: CopyCsvContext = { mirror, groups, options, copiesWritten };
  return {
    definitions: [
      namespaceDefinition(context),
      sourceDefinition(context),
      olmConfigDefinition(context),
    ],
    close: () => groups.stop(),
  };
}

/** The copy-csv function module. */
export const createFunction: CreateFunction = (context) => {
  const { definitions, close } = copyCsvDefinitions(context.backbone, context.registry);
  return Promise.resolve({ definitions, close: () => Promise.resolve(close()) });
};
