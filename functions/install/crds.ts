// CustomResourceDefinitions as the install reconcilers read them (InstallPlan steps wait for the
// CRDs they create, CSV requirements check the CRDs they name).
import type { KubeObject } from '../../shared/kube/client.js';

/** A CRD, as far as the install reconcilers read one. */
export type CrdLike = KubeObject & {
  spec?: {
    group?: string;
    names?: { kind?: string };
    versions?: { name: string; served?: boolean; storage?: boolean }[];
  };
  status?: {
    conditions?: { type: string; status: string }[];
    storedVersions?: string[];
  };
};

/** Whether a CRD is Established and its names accepted (the API is served). */
export function crdServed(crd: KubeObject | undefined): boolean {
  if (crd === undefined) return false;
  const conditions = (crd as CrdLike).status?.conditions ?? [];
  const isTrue = (type: string): boolean =>
    conditions.some((c) => c.type === type && c.status === 'True');
  return isTrue('Established') && isTrue('NamesAccepted');
}
