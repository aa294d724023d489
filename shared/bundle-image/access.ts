// Pull credentials of bundle images: those of upstream's unpack Job pod for the CatalogSource a
// bundle comes from (shared/registry-access: spec.secrets, else the namespace's default
// ServiceAccount's pull secrets, then the operator-wide auth file).
import type { KubeClient, KubeObject } from '../kube/client.js';
import type { CredentialLookup } from '../oci/index.js';
import { PullSecretError, bundleUnpackPod, pullCredentials } from '../registry-access/index.js';
import { BundleImageError, BundleImageErrorCode } from './types.js';

/**
 * The credentials for a bundle of CatalogSource `catalog` (`source`: the CatalogSource as read,
 * undefined when it is missing, which gives the operator-wide credentials alone). A pull secret
 * that cannot be used is a BundleImageError (PullSecret).
 */
export async function catalogPullCredentials(
  client: KubeClient,
  catalog: { namespace: string; name: string },
  source: KubeObject | undefined,
  operatorWide: CredentialLookup | undefined,
): Promise<CredentialLookup | undefined> {
  if (source === undefined) return operatorWide;
  const secrets = ((source['spec'] as { secrets?: unknown } | undefined)?.secrets ??
    []) as unknown[];
  try {
    return await pullCredentials(
      client,
      bundleUnpackPod({ ...catalog, secrets: secrets.map(String) }),
      operatorWide,
    );
  } catch (error) {
    if (!(error instanceof PullSecretError)) throw error;
    throw new BundleImageError(BundleImageErrorCode.PullSecret, error.message);
  }
}
