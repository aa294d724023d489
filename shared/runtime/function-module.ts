// How an olmq function plugs into its hosts (`olmq run <function>` and `olmq up`): each
// function folder exports `createFunction(context)` returning the definitions it runs. The
// host owns connections, clients, metrics and shutdown; the function owns its decisions.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Backbone } from '../bus/backbone.js';
import type { KubeClient } from '../kube/client.js';
import type { AnyFunctionDefinition } from './types.js';

/** What a host hands a function when it starts. */
export interface FunctionContext {
  backbone: Backbone;
  /** One API client per cluster id this replica serves. */
  clients: ReadonlyMap<string, KubeClient>;
  log: Logger;
  /** The process's metrics registry; functions add their own OLM metrics to it. */
  registry: Registry;
  /** The global catalog namespace (upstream: olm, or openshift-marketplace on OpenShift). */
  globalCatalogNamespace: string;
  /** Aborted when the host stops. */
  signal: AbortSignal;
}

/** A started function: its definitions, and what to close when the host stops. */
export interface StartedFunction {
  /** One per work-key type the function reconciles. */
  definitions: readonly AnyFunctionDefinition[];
  /** Releases timers, caches and side servers; called after the definitions' hosts drained. */
  close?(): Promise<void>;
}

/** The export each functions/<name>/index.ts provides. */
export type CreateFunction = (context: FunctionContext) => Promise<StartedFunction>;
