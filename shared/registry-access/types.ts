// Contract types of registry access: the operator-wide settings (auth file, CAs, mirrors), the
// client and credentials built from them once, the pod whose pull secrets a pull uses, and the
// failures, each saying whether retrying helps.
import type { CredentialLookup, MirrorRule, RegistryClient } from '../oci/index.js';

/** Operator-wide registry settings (the same for catalog and bundle images). */
export interface RegistryAccessSettings {
  /** A dockerconfigjson file with credentials for every image (after the pod's pull secrets). */
  registryAuthFile?: string;
  /** PEM files of CAs trusted for registries, besides the system ones. */
  registryCaFiles: readonly string[];
  /** Registry mirror rules (registries.conf / ImageDigestMirrorSet style). */
  registryMirrors: readonly MirrorRule[];
}

/** A registry client and the operator-wide credentials, built once at start. */
export interface RegistryAccess {
  client: RegistryClient;
  /** Credentials of the operator-wide auth file (kubelet's node credentials, upstream). */
  credentials: CredentialLookup | undefined;
}

/**
 * The pod upstream OLM would pull an image with, as far as pull credentials go: kubelet uses
 * the pod's `imagePullSecrets`, which ServiceAccount admission fills from the ServiceAccount's
 * when the pod names none.
 */
export interface PullingPod {
  namespace: string;
  /** `spec.imagePullSecrets` of the pod, by name. */
  imagePullSecrets: readonly string[];
  /** `spec.serviceAccountName` of the pod. */
  serviceAccountName: string;
  /**
   * Whether the ServiceAccount's pull secrets count even when the pod names some (after them).
   * Admission copies them only into a pod that names none; set for a pod whose own list only
   * repeats what OLM put on its ServiceAccount.
   */
  serviceAccountAlways: boolean;
}

/** A bad registry setting; names the variable or flag. Retrying does not help. */
export class RegistryAccessConfigError extends Error {
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'RegistryAccessConfigError';
  }
}

/** A pull secret named by a CatalogSource that cannot be used: names it and why. */
export class PullSecretError extends Error {
  /** Someone has to create or fix the Secret first. */
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'PullSecretError';
  }
}
