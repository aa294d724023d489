// Installs the OLM API (olmq's CRDs, generated from shared/api) into a cluster, idempotently:
// server-side apply with olmq's field manager, then wait until every CRD is Established.
import { buildCrd, kindDefinitions } from '../api/crd/definitions.js';
import type { KubeClient, KubeObject } from './client.js';

interface CrdStatus extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

/** Applies every olmq CRD and resolves once all are Established (or rejects after `timeoutMs`). */
export async function ensureOlmApi(client: KubeClient, timeoutMs = 30_000): Promise<string[]> {
  const crds = kindDefinitions.map((definition) => buildCrd(definition) as unknown as KubeObject);
  for (const crd of crds)
    await client.patch(refOf(crd), 'apply', crd, { fieldManager: 'olmq', force: true });
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    for (;;) {
      const live = await client.get<CrdStatus>(refOf(crd));
      if (live?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
        break;
      if (Date.now() > deadline)
        throw new Error(`CRD ${crd.metadata.name ?? ''} not Established after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return crds.map((crd) => crd.metadata.name ?? '');
}

function refOf(crd: KubeObject) {
  return { apiVersion: crd.apiVersion, kind: crd.kind, name: crd.metadata.name };
}
