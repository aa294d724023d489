// Waiting for a CatalogSource a benchmark created to be READY before it starts measuring.
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';

type CatalogSource = KubeObject & { status?: { connectionState?: { lastObservedState?: string } } };

/** Resolves once CatalogSource `namespace/name` is READY; throws after `timeoutMs`. */
export async function catalogReady(
  admin: KubeClient,
  name: string,
  { namespace = 'olm', timeoutMs = 120_000 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const source = await admin.get<CatalogSource>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      namespace,
      name,
    });
    if (source?.status?.connectionState?.lastObservedState === 'READY') return;
    if (Date.now() > deadline)
      throw new Error(`CatalogSource ${namespace}/${name} not READY within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
