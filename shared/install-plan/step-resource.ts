// An object as an InstallPlan step carries it, and back: the step resource's group, version,
// kind (a Secret travels as kind BundleSecret) and name, and its manifest (the object's JSON).
import type { StepResource } from '../api/installplan.js';
import type { KubeObject } from '../kube/client.js';

/** The group and version of an apiVersion ("v1" is the core group ""). */
export function groupVersionOf(apiVersion: unknown): { group: string; version: string } {
  const text = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = text.indexOf('/');
  return slash < 0
    ? { group: '', version: text }
    : { group: text.slice(0, slash), version: text.slice(slash + 1) };
}

/** apiVersion of a step resource ("v1" for the core group). */
export function apiVersionOf(resource: Pick<StepResource, 'group' | 'version'>): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/** The step kind of an object's kind (Secrets travel as BundleSecret steps). */
export function stepKindOf(kind: string): string {
  return kind === 'Secret' ? 'BundleSecret' : kind;
}

/** The Kubernetes kind of a step's object (BundleSecret steps carry Secrets). */
export function objectKindOf(resource: Pick<StepResource, 'kind'>): string {
  return resource.kind === 'BundleSecret' ? 'Secret' : resource.kind;
}

/** A step whose manifest cannot be read: the plan is bad, not the cluster. */
export class StepManifestError extends Error {
  constructor(
    readonly step: number,
    message: string,
  ) {
    super(message);
    this.name = 'StepManifestError';
  }
}

/** Decodes a step's manifest (JSON of the object). */
export function manifestOf(resource: StepResource, step: number): KubeObject {
  if (resource.manifest === undefined || resource.manifest === '') {
    throw new StepManifestError(
      step,
      `step ${step} (${resource.kind} ${resource.name}) has no manifest`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(resource.manifest);
  } catch (error) {
    throw new StepManifestError(
      step,
      `step ${step} (${resource.kind} ${resource.name}): manifest is not JSON: ${(error as Error).message}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new StepManifestError(
      step,
      `step ${step} (${resource.kind} ${resource.name}): manifest is not an object`,
    );
  }
  // A JSON object: whatever Kubernetes object the bundle shipped, completed below.
  const object = value as Partial<KubeObject>;
  return {
    ...object,
    apiVersion: object.apiVersion ?? apiVersionOf(resource),
    kind: objectKindOf(resource),
    metadata: { ...(object.metadata ?? {}), name: object.metadata?.name ?? resource.name },
  };
}
