// Contract of the validation room: one entry per built-in kind.
import type { JsonObject } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';

/** How one built-in kind is validated, as its kube registry strategy's Validate/ValidateUpdate. */
export interface KindValidation {
  /** Checks of the object itself, on create and on every update of the main resource. */
  validate(object: JsonObject): StatusCause[];
  /** Checks comparing an update with the stored object (immutable fields), after validate's. */
  validateUpdate?(object: JsonObject, old: JsonObject): StatusCause[];
}
