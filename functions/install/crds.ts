// CustomResourceDefinitions as the install reconcilers read them (InstallPlan steps wait for the
// CRDs they create, CSV requirements check the CRDs they name).
import type { CustomResourceDefinition } from '../../shared/api/core.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Served } from '../../shared/kube/served.js';

/** A CustomResourceDefinition as read from the API. */
export type Crd = Served<CustomResourceDefinition>;

/**
 * `object`, of kind CustomResourceDefinition, read as one: a plan step's cluster object or its
 * manifest (which no API server has validated yet, so its fields are read defensively).
 */
export const asCrd = (object: KubeObject): Crd => object as Crd;

/** Whether a CRD is Established and its names accepted (the API is served). */
export function crdServed(crd: Crd | undefined): boolean {
  if (crd === undefined) return false;
  const conditions = crd.status?.conditions ?? [];
  const isTrue = (type: string): boolean =>
    conditions.some((c) => c.type === type && c.status === 'True');
  return isTrue('Established') && isTrue('NamesAccepted');
}
