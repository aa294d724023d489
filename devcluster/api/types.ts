// Contract types of the API core: options of reads and writes, what a list answers, and the
// hooks (admission, forced conflicts) the core is built with.
import type { UserInfo } from '../auth/index.js';
import type { ResourceRegistry } from '../resources/registry.js';
import type { IPFamily, ResourceType } from '../resources/types.js';
import type { ObjectStore } from '../storage/store.js';
import type { JsonObject } from '../../shared/kube/json.js';
import type { FieldSelector, LabelSelector } from '../../shared/kube/selectors.js';

/** How unknown fields in a request body are treated (fieldValidation query parameter). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Per-request options of writes. */
export interface WriteOptions {
  dryRun: boolean;
  fieldManager: string;
  fieldValidation: FieldValidation;
  /** Warnings to return in `Warning:` headers; the core appends to it. */
  warnings: string[];
  /** Who is writing, for admission checks; absent for the server's own controllers. */
  user?: UserInfo;
}

/** A check of an object about to be stored on behalf of a user; throws an ApiError to refuse it. */
export type Admission = (type: ResourceType, object: JsonObject, user: UserInfo) => void;

/** The PATCH content types the server accepts. */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** delete options (metav1.DeleteOptions subset). */
export interface DeleteOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' | undefined;
  preconditions?: { uid?: string | undefined; resourceVersion?: string | undefined } | undefined;
  dryRun: boolean;
}

/** A list request's filters and paging. */
export interface ListOptions {
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  limit: number | undefined;
  continueToken: string | undefined;
}

/** A page of a list. */
export interface ListResult {
  items: JsonObject[];
  resourceVersion: string;
  continueToken: string | undefined;
  remainingItemCount: number | undefined;
}

/** Hooks the fault-injection layer offers the core. */
export interface ConflictInjector {
  /** True when the next write to this object must answer 409 (consumes one forced conflict). */
  takeConflict(key: string, namespace: string, name: string): boolean;
}

/** Dependencies of the core. */
export interface CoreOptions {
  store: ObjectStore;
  registry: ResourceRegistry;
  now?: () => Date;
  faults?: ConflictInjector;
  /** Admission checks of user writes (e.g. RBAC escalation prevention). */
  admission?: Admission;
  /** The families of the service CIDRs, primary first (default IPv4 only). */
  serviceIPFamilies?: readonly IPFamily[];
}
