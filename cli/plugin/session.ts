// The cluster a command talks to, found as kubectl finds it: --kubeconfig, else KUBECONFIG,
// else ~/.kube/config; --context, else the current context; -n, else the context's namespace,
// else "default". Reads are checked against the views of ./types.ts.
import { KubeConfig } from '@kubernetes/client-node';
import type { z } from 'zod';
import { KubeClient, type KubeObject, type ObjectRef } from '../../shared/kube/client.js';
import { KubeconfigError } from '../../shared/kube/clusters.js';
import type { GlobalOptions } from './args.js';
import { NotFoundError, UsageError } from './types.js';

/** One cluster as a command sees it. */
export interface Session {
  client: KubeClient;
  /** The context's name (the cluster's name in `fleet` output). */
  context: string;
  /** The namespace commands act in. */
  namespace: string;
}

/** API versions of the kinds the plugin touches. */
export const api = {
  olm: 'operators.coreos.com/v1alpha1',
  olmV1: 'operators.coreos.com/v1',
  packages: 'packages.operators.coreos.com/v1',
} as const;

/** Reads the kubeconfig as kubectl would. */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    if (path !== undefined) kubeConfig.loadFromFile(path);
    else kubeConfig.loadFromDefault();
  } catch (error) {
    throw new UsageError(
      `--kubeconfig: cannot read ${path ?? 'the default kubeconfig'}: ${(error as Error).message}`,
    );
  }
  return kubeConfig;
}

/** Selects `context` in `kubeConfig`, or says which contexts exist. */
export function useContext(kubeConfig: KubeConfig, context: string, flag = '--context'): void {
  if (!kubeConfig.getContexts().some((c) => c.name === context)) {
    const known =
      kubeConfig
        .getContexts()
        .map((c) => c.name)
        .join(', ') || 'none';
    throw new UsageError(
      `${flag}: context "${context}" not found in the kubeconfig (contexts: ${known})`,
    );
  }
  kubeConfig.setCurrentContext(context);
}

/** A client of the kubeconfig's current context. */
export async function sessionOf(kubeConfig: KubeConfig, namespace?: string): Promise<Session> {
  const context = kubeConfig.getCurrentContext();
  if (kubeConfig.getCurrentCluster() === null)
    throw new UsageError(`--context: context "${context}" names no cluster in the kubeconfig`);
  let client: KubeClient;
  try {
    client = await KubeClient.fromKubeConfig(context, kubeConfig, { userAgent: 'kubectl-olmq' });
  } catch (error) {
    if (error instanceof KubeconfigError) throw new UsageError(`--kubeconfig: ${error.message}`);
    throw error;
  }
  const contextNamespace = kubeConfig.getContextObject(context)?.namespace;
  return { client, context, namespace: namespace ?? contextNamespace ?? 'default' };
}

/** The session the global flags name. */
export async function openSession(options: GlobalOptions): Promise<Session> {
  const kubeConfig = loadKubeConfig(options.kubeconfig);
  if (options.context !== undefined) useContext(kubeConfig, options.context);
  return sessionOf(kubeConfig, options.namespace);
}

function check<S extends z.ZodType>(schema: S, object: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(object);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${what}: unexpected shape at ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? ''}`,
    );
  }
  return parsed.data;
}

/** Reads one object through `schema`; undefined when it does not exist. */
export async function getView<S extends z.ZodType>(
  client: KubeClient,
  ref: ObjectRef & { name: string },
  schema: S,
): Promise<z.output<S> | undefined> {
  const object = await client.get(ref);
  if (object === undefined) return undefined;
  return check(schema, object, `${ref.kind} ${ref.namespace ?? ''}/${ref.name}`);
}

/** Reads one object that must exist; NotFound is worded as kubectl's. */
export async function mustGet<S extends z.ZodType>(
  client: KubeClient,
  ref: ObjectRef & { name: string },
  schema: S,
  resource: string,
): Promise<z.output<S>> {
  const found = await getView(client, ref, schema);
  if (found === undefined)
    throw new NotFoundError(
      `${resource} "${ref.name}" not found${ref.namespace === undefined ? '' : ` in namespace "${ref.namespace}"`}`,
    );
  return found;
}

/** Lists objects through `schema` (one namespace, or all when namespace is undefined). */
export async function listView<S extends z.ZodType>(
  client: KubeClient,
  ref: ObjectRef,
  schema: S,
  labelSelector?: string,
): Promise<z.output<S>[]> {
  const list = await client.list<KubeObject>(
    ref,
    labelSelector === undefined ? {} : { labelSelector },
  );
  return list.items.map((item) =>
    check(schema, item, `${ref.kind} ${item.metadata.namespace ?? ''}/${item.metadata.name ?? ''}`),
  );
}

/** Whether `apiVersion` is served (e.g. no package server installed). */
export async function served(
  client: KubeClient,
  apiVersion: string,
  kind: string,
): Promise<boolean> {
  try {
    await client.resource(apiVersion, kind);
    return true;
  } catch {
    return false;
  }
}
