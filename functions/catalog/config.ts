// Configuration of the catalog function, from environment variables (the host passes no
// function-specific flags). Parsed once at start; errors name the variable; the result is frozen.
import { z } from 'zod';
import {
  RegistryAccessConfigError,
  registryAccessSettingsFromEnv,
  registryEnv,
  type RegistryAccessSettings,
} from '../../shared/registry-access/index.js';
import { parseGoDuration } from './spec.js';

/** How an image source is served: read directly (default) or through a registry Pod. */
export type ImageMode = 'direct' | 'pod';

/** The catalog function's settings (registry access: shared/registry-access). */
export interface CatalogConfig extends RegistryAccessSettings {
  /**
   * Where to dial a registry Service instead of its cluster DNS name, keyed "namespace/service".
   * For processes outside the cluster network (the devcluster, a laptop): e.g. the Service of
   * an image-backed CatalogSource mapped to a locally served registry.
   */
  registryAddresses: ReadonlyMap<string, string>;
  /** Re-read sources this often without being asked (grpc without registryPoll; ConfigMaps). */
  resyncMs: number;
  /** Retry an unreachable registry or missing ConfigMap after this long. */
  retryMs: number;
  /** Look again this soon while a registry pod starts. */
  connectingRetryMs: number;
  /** Look again this soon while a polling update pod starts (upstream: 30 s). */
  updatePodRequeueMs: number;
  /** Give up reading a registry after this long. */
  fetchTimeoutMs: number;
  /** How `spec.image` sources are served unless annotated: read directly, or a registry Pod. */
  imageMode: ImageMode;
}

/** Defaults of CatalogConfig. */
export const defaultCatalogConfig: CatalogConfig = Object.freeze({
  registryAddresses: new Map<string, string>(),
  resyncMs: 15 * 60_000,
  retryMs: 30_000,
  connectingRetryMs: 5_000,
  updatePodRequeueMs: 30_000,
  fetchTimeoutMs: 60_000,
  imageMode: 'direct',
  registryCaFiles: [],
  registryMirrors: [],
});

/** Environment variables of the catalog function. */
export const catalogEnv = {
  registryAddresses: 'OLMQ_CATALOG_REGISTRY_ADDRESSES',
  resync: 'OLMQ_CATALOG_RESYNC',
  retry: 'OLMQ_CATALOG_RETRY',
  fetchTimeout: 'OLMQ_CATALOG_FETCH_TIMEOUT',
  imageMode: 'OLMQ_CATALOG_IMAGE_MODE',
  registryAuthFile: registryEnv.authFile,
  registryCaFiles: registryEnv.caFiles,
  registryMirrors: registryEnv.mirrors,
} as const;

/** A bad environment variable; names it. */
export class CatalogConfigError extends Error {
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'CatalogConfigError';
  }
}

const serviceKey = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const hostPort = /^\S+:\d{1,5}$/;

/** Parses "ns/service=host:port,ns/other=host:port". */
export function parseRegistryAddresses(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const item of text.split(',').map((s) => s.trim())) {
    if (item === '') continue;
    const [key = '', target = '', ...extra] = item.split('=');
    if (extra.length > 0 || !serviceKey.test(key) || !hostPort.test(target)) {
      throw new CatalogConfigError(
        `${catalogEnv.registryAddresses}: "${item}" is not namespace/service=host:port`,
      );
    }
    map.set(key, target);
  }
  return map;
}

const duration = (variable: string) =>
  z.string().transform((text, ctx) => {
    const ms = parseGoDuration(text);
    if (typeof ms === 'string' || ms <= 0) {
      ctx.addIssue({
        code: 'custom',
        message: `${variable}: ${typeof ms === 'string' ? ms : 'must be positive'}`,
      });
      return z.NEVER;
    }
    return ms;
  });

const envSchema = z.object({
  [catalogEnv.registryAddresses]: z.string().optional(),
  [catalogEnv.resync]: duration(catalogEnv.resync).optional(),
  [catalogEnv.retry]: duration(catalogEnv.retry).optional(),
  [catalogEnv.fetchTimeout]: duration(catalogEnv.fetchTimeout).optional(),
  [catalogEnv.imageMode]: z
    .enum(['direct', 'pod'], { message: `${catalogEnv.imageMode}: must be direct or pod` })
    .optional(),
});

/** Reads the catalog function's configuration from `env`. */
export function catalogConfigFromEnv(env: NodeJS.ProcessEnv): CatalogConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success)
    throw new CatalogConfigError(parsed.error.issues.map((i) => i.message).join('; '));
  const values = parsed.data;
  return Object.freeze({
    ...defaultCatalogConfig,
    registryAddresses: parseRegistryAddresses(values[catalogEnv.registryAddresses] ?? ''),
    resyncMs: values[catalogEnv.resync] ?? defaultCatalogConfig.resyncMs,
    retryMs: values[catalogEnv.retry] ?? defaultCatalogConfig.retryMs,
    fetchTimeoutMs: values[catalogEnv.fetchTimeout] ?? defaultCatalogConfig.fetchTimeoutMs,
    imageMode: values[catalogEnv.imageMode] ?? defaultCatalogConfig.imageMode,
    ...registrySettingsOf(env),
  });
}

function registrySettingsOf(env: NodeJS.ProcessEnv): RegistryAccessSettings {
  try {
    return registryAccessSettingsFromEnv(env);
  } catch (error) {
    if (!(error instanceof RegistryAccessConfigError)) throw error;
    throw new CatalogConfigError(error.message);
  }
}
