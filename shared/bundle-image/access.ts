// Registry access for bundle images: the operator-wide settings (the same environment variables
// the catalog function reads for catalog images: auth file, CA files, mirrors) and the pull
// secrets of the CatalogSource a bundle comes from (spec.secrets, as upstream's unpack Job uses
// them), tried before the operator-wide auth file.
import { readFile } from 'node:fs/promises';
import type { KubeClient } from '../kube/client.js';
import {
  RegistryClient,
  credentialsFromDockerConfigs,
  firstCredential,
  parseMirrorRules,
  type CredentialLookup,
} from '../oci/index.js';
import { BundleImageError, BundleImageErrorCode, type BundleImageAccessConfig } from './types.js';

/** Environment variables of registry access (shared with the catalog function). */
export const registryEnv = {
  authFile: 'OLMQ_REGISTRY_AUTH_FILE',
  caFiles: 'OLMQ_REGISTRY_CA_FILES',
  mirrors: 'OLMQ_REGISTRY_MIRRORS',
} as const;

/** A bad registry setting; names the variable. */
export class RegistryAccessConfigError extends Error {
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'RegistryAccessConfigError';
  }
}

/** Reads the registry settings from `env`. */
export function bundleImageAccessFromEnv(env: NodeJS.ProcessEnv): BundleImageAccessConfig {
  const authFile = env[registryEnv.authFile];
  return Object.freeze({
    ...(authFile === undefined || authFile === '' ? {} : { registryAuthFile: authFile }),
    registryCaFiles: (env[registryEnv.caFiles] ?? '')
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f !== ''),
    registryMirrors: env[registryEnv.mirrors] ?? '',
  });
}

/** A registry client and the operator-wide credentials, built once at start. */
export interface RegistryAccess {
  client: RegistryClient;
  credentials: CredentialLookup | undefined;
}

/** Builds the registry access from its settings, reading the files once. */
export async function registryAccessOf(
  config: BundleImageAccessConfig,
  userAgent: string,
): Promise<RegistryAccess> {
  const read = async (file: string, variable: string): Promise<string> =>
    readFile(file, 'utf8').catch((error: unknown) => {
      throw new RegistryAccessConfigError(
        `${variable}: cannot read ${file}: ${(error as Error).message}`,
      );
    });
  const caCertificates = await Promise.all(
    config.registryCaFiles.map((file) => read(file, registryEnv.caFiles)),
  );
  let credentials: CredentialLookup | undefined;
  let mirrors;
  try {
    if (config.registryAuthFile !== undefined) {
      const json = await read(config.registryAuthFile, registryEnv.authFile);
      credentials = credentialsFromDockerConfigs([{ source: registryEnv.authFile, json }]);
    }
    mirrors = parseMirrorRules(config.registryMirrors, registryEnv.mirrors);
  } catch (error) {
    if (error instanceof RegistryAccessConfigError) throw error;
    throw new RegistryAccessConfigError((error as Error).message);
  }
  return { client: new RegistryClient({ caCertificates, mirrors, userAgent }), credentials };
}

/**
 * The credentials for a bundle of CatalogSource `namespace/name`: its spec.secrets
 * (dockerconfigjson or dockercfg Secrets in its namespace, in order), then the operator-wide ones.
 * A missing CatalogSource gives the operator-wide credentials alone.
 */
export async function catalogPullCredentials(
  client: KubeClient,
  catalog: { namespace: string; name: string },
  operatorWide: CredentialLookup | undefined,
): Promise<CredentialLookup | undefined> {
  const source = await client.get({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    namespace: catalog.namespace,
    name: catalog.name,
  });
  const names = ((source?.['spec'] as { secrets?: unknown } | undefined)?.secrets ??
    []) as unknown[];
  if (names.length === 0) return operatorWide;
  const documents: { source: string; json: string }[] = [];
  for (const name of names.map(String)) {
    const what = `pull secret ${catalog.namespace}/${name}`;
    const secret = await client.get({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: catalog.namespace,
      name,
    });
    if (secret === undefined) {
      throw new BundleImageError(BundleImageErrorCode.PullSecret, `${what} not found`);
    }
    const data = (secret['data'] ?? {}) as Record<string, string>;
    const encoded = data['.dockerconfigjson'] ?? data['.dockercfg'];
    if (encoded === undefined) {
      throw new BundleImageError(
        BundleImageErrorCode.PullSecret,
        `${what} has no .dockerconfigjson (type ${String(secret['type'])})`,
      );
    }
    documents.push({ source: what, json: Buffer.from(encoded, 'base64').toString('utf8') });
  }
  try {
    return firstCredential(credentialsFromDockerConfigs(documents), operatorWide);
  } catch (error) {
    throw new BundleImageError(BundleImageErrorCode.PullSecret, (error as Error).message);
  }
}
