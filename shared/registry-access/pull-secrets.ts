// Pull credentials as upstream OLM's pods would have them. Kubelet pulls with the pod's
// imagePullSecrets (ServiceAccount admission copies the ServiceAccount's into a pod that names
// none), then the node's own credentials — here the operator-wide auth file. The first source
// that has a credential for the registry wins.
import type { KubeClient } from '../kube/client.js';
import {
  credentialsFromDockerConfigs,
  firstCredential,
  type CredentialLookup,
} from '../oci/index.js';
import { PullSecretError, type PullingPod } from './types.js';

/** The CatalogSource fields pull credentials depend on. */
export interface CatalogSourceRef {
  namespace: string;
  name: string;
  /** `spec.secrets`. */
  secrets: readonly string[];
}

/**
 * The registry Pod upstream runs for a `spec.image` CatalogSource: ServiceAccount `<name>`, which
 * OLM creates with `spec.secrets` as its imagePullSecrets and keeps when it exists (so a user may
 * add secrets to it). olmq reads the image directly and may never create that ServiceAccount, so
 * `spec.secrets` come first, then whatever the ServiceAccount holds.
 */
export function catalogRegistryPod(source: CatalogSourceRef): PullingPod {
  return {
    namespace: source.namespace,
    imagePullSecrets: source.secrets,
    serviceAccountName: source.name,
    serviceAccountAlways: true,
  };
}

/**
 * The bundle unpack Job's pod upstream: in the CatalogSource's namespace, `spec.secrets` as its
 * imagePullSecrets, no serviceAccountName (so `default`, whose pull secrets admission adds only
 * when `spec.secrets` is empty).
 */
export function bundleUnpackPod(source: CatalogSourceRef): PullingPod {
  return {
    namespace: source.namespace,
    imagePullSecrets: source.secrets,
    serviceAccountName: 'default',
    serviceAccountAlways: false,
  };
}

/**
 * The credentials `pod` pulls with: its pull secrets (each must exist), then its
 * ServiceAccount's (a missing one is skipped, as kubelet does), then `operatorWide`.
 * Throws PullSecretError for a named Secret that is missing or not dockerconfigjson.
 */
export async function pullCredentials(
  client: KubeClient,
  pod: PullingPod,
  operatorWide: CredentialLookup | undefined,
): Promise<CredentialLookup> {
  const documents: { source: string; json: string }[] = [];
  const named = pod.imagePullSecrets.filter((name) => name !== '');
  for (const name of named) {
    const document = await secretDocument(client, pod.namespace, name, undefined);
    if (document === undefined) {
      throw new PullSecretError(`pull secret ${pod.namespace}/${name} not found`);
    }
    documents.push(document);
  }
  if (named.length === 0 || pod.serviceAccountAlways) {
    const account = await client.get({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      namespace: pod.namespace,
      name: pod.serviceAccountName,
    });
    const refs = (account?.['imagePullSecrets'] ?? []) as { name?: unknown }[];
    const owner = `ServiceAccount ${pod.namespace}/${pod.serviceAccountName}`;
    for (const name of refs.map((r) => (typeof r.name === 'string' ? r.name : ''))) {
      if (name === '' || named.includes(name)) continue;
      const document = await secretDocument(client, pod.namespace, name, owner);
      if (document !== undefined) documents.push(document);
    }
  }
  try {
    return firstCredential(credentialsFromDockerConfigs(documents), operatorWide);
  } catch (error) {
    throw new PullSecretError((error as Error).message);
  }
}

/** A pull Secret's dockerconfigjson (or dockercfg) text; undefined when it does not exist. */
async function secretDocument(
  client: KubeClient,
  namespace: string,
  name: string,
  owner: string | undefined,
): Promise<{ source: string; json: string } | undefined> {
  const what = `pull secret ${namespace}/${name}${owner === undefined ? '' : ` of ${owner}`}`;
  const secret = await client.get({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  if (secret === undefined) return undefined;
  const data = (secret['data'] ?? {}) as Record<string, string>;
  const encoded = data['.dockerconfigjson'] ?? data['.dockercfg'];
  if (encoded === undefined) {
    throw new PullSecretError(`${what} has no .dockerconfigjson (type ${String(secret['type'])})`);
  }
  return { source: what, json: Buffer.from(encoded, 'base64').toString('utf8') };
}
