// The catalog function's contract types: what its decision observes of one CatalogSource, the
// writes it returns, its timing and its own sync bookkeeping.
import type { CatalogSource } from '../../shared/api/catalogsource.js';
import type { CatalogContent, CatalogIndex, CatalogWarning } from '../../shared/catalog/index.js';
import type { CatalogIndexRecord } from '../../shared/handoff/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import type { SourceKind } from './spec.js';

/** Timing of the catalog function (see config.ts for the defaults and their env vars). */
export interface CatalogTiming {
  /** Re-read a source this often even when nothing asks (grpc without registryPoll; configmap). */
  resyncMs: number;
  /** Retry an unreachable or missing source after this long. */
  retryMs: number;
  /** Look again this soon while a registry pod starts. */
  connectingRetryMs: number;
  /** Look again this soon while a polling update pod starts (upstream: 30 s). */
  updatePodRequeueMs: number;
}

/** The catalog function's own bookkeeping per CatalogSource: what its served index was read from. */
export interface SyncRecord {
  /** What was read, e.g. "configmap:<uid>@<resourceVersion>", "grpc:<address>". */
  sourceVersion: string;
  /** Digest of the index built from it. */
  digest: string;
  /** When it was read (RFC 3339). */
  fetchedAt: string;
  /** The build's warnings, summarised for the status message ('' when none). */
  summary: string;
}

/** An index built from a source this round. */
export interface BuiltCatalog {
  sourceVersion: string;
  index: CatalogIndex;
  content: CatalogContent;
  warnings: readonly CatalogWarning[];
  durationMs: number;
}

/** What reading the source gave this round. */
export type SourceRead =
  | { kind: 'none' }
  | { kind: 'built'; built: BuiltCatalog }
  /** A directly read image whose digest has not moved since the served index was built. */
  | { kind: 'checked' }
  | { kind: 'unreachable'; address: string; message: string }
  | { kind: 'unusable'; message: string };

/** The registry objects of an image-backed source, as listed. */
export interface RegistryObservation {
  serviceAccount: KubeObject | undefined;
  service: KubeObject | undefined;
  /** Pods labelled olm.catalogSource=<name>. */
  pods: readonly KubeObject[];
  /** Pods labelled catalogsource.operators.coreos.com/update=<name>. */
  updatePods: readonly KubeObject[];
  /** Whether the namespace enforces the restricted pod security profile. */
  restrictedByDefault: boolean;
  /** The catalog's NetworkPolicies that exist, by name; undefined when the cluster serves no NetworkPolicy API. */
  networkPolicies?: ReadonlyMap<string, KubeObject>;
}

/** Everything the decision needs. */
export interface CatalogSnapshot {
  cluster: string;
  namespace: string;
  name: string;
  now: Date;
  globalCatalogNamespace: string;
  timing: CatalogTiming;
  /** The CatalogSource as read from the API; undefined when it is gone. */
  object: KubeObject | undefined;
  /** Its parsed form, when it parses. */
  source: CatalogSource | undefined;
  /** Why the spec cannot be served (schema or upstream's validation), if it cannot. */
  invalid: string | undefined;
  kind: SourceKind | undefined;
  /** configmap sources: the ConfigMap (undefined when missing) or why it could not be read. */
  configMap?: { object: KubeObject | undefined; error?: string };
  registry?: RegistryObservation;
  read: SourceRead;
  sync: SyncRecord | undefined;
  record: CatalogIndexRecord | undefined;
}

/** The writes of one decision. */
export interface CatalogWrites {
  /** Kubernetes writes, in order (the status update last). */
  kube: Write[];
  /** An index to store (and count) before the record names it. */
  built?: BuiltCatalog;
  /** New bookkeeping, or null to delete it. */
  sync?: SyncRecord | null;
  /** The index record to publish, or null to delete it. */
  record?: CatalogIndexRecord | null;
}

/** A CatalogSource status as read and written (unknown fields kept). */
export type CatalogStatus = Record<string, unknown> & {
  reason?: string;
  message?: string;
  connectionState?: { address?: string; lastObservedState: string; lastConnect?: string };
  registryService?: Record<string, string>;
  configMapReference?: Record<string, string>;
  latestImageRegistryPoll?: string;
};
