// The operator-wide registry settings, from environment variables (read by the catalog and plan
// functions and the offline CLI commands alike), and the client and credentials built from them.
import { readFile } from 'node:fs/promises';
import {
  RegistryClient,
  credentialsFromDockerConfigs,
  parseMirrorRules,
  type CredentialLookup,
} from '../oci/index.js';
import {
  RegistryAccessConfigError,
  type RegistryAccess,
  type RegistryAccessSettings,
} from './types.js';

/** Environment variables of registry access. */
export const registryEnv = {
  authFile: 'OLMQ_REGISTRY_AUTH_FILE',
  caFiles: 'OLMQ_REGISTRY_CA_FILES',
  mirrors: 'OLMQ_REGISTRY_MIRRORS',
} as const;

/** Reads the registry settings from `env`; a bad value names its variable. */
export function registryAccessSettingsFromEnv(env: NodeJS.ProcessEnv): RegistryAccessSettings {
  const authFile = env[registryEnv.authFile];
  let registryMirrors;
  try {
    registryMirrors = parseMirrorRules(env[registryEnv.mirrors] ?? '', registryEnv.mirrors);
  } catch (error) {
    throw new RegistryAccessConfigError((error as Error).message);
  }
  return Object.freeze({
    ...(authFile === undefined || authFile === '' ? {} : { registryAuthFile: authFile }),
    registryCaFiles: splitFiles(env[registryEnv.caFiles]),
    registryMirrors,
  });
}

/** A comma-separated list of files (spaces and empty items ignored). */
export function splitFiles(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
}

/**
 * Builds the registry access from its settings, reading the files once. `client` replaces the
 * client built here (tests), the credentials are still read.
 */
export async function registryAccessOf(
  settings: RegistryAccessSettings,
  options: { userAgent: string; timeoutMs?: number; client?: RegistryClient },
): Promise<RegistryAccess> {
  const read = async (file: string, variable: string): Promise<string> =>
    readFile(file, 'utf8').catch((error: unknown) => {
      throw new RegistryAccessConfigError(
        `${variable}: cannot read ${file}: ${(error as Error).message}`,
      );
    });
  const caCertificates = await Promise.all(
    settings.registryCaFiles.map((file) => read(file, registryEnv.caFiles)),
  );
  let credentials: CredentialLookup | undefined;
  if (settings.registryAuthFile !== undefined) {
    const json = await read(settings.registryAuthFile, registryEnv.authFile);
    try {
      credentials = credentialsFromDockerConfigs([{ source: registryEnv.authFile, json }]);
    } catch (error) {
      throw new RegistryAccessConfigError((error as Error).message);
    }
  }
  const client =
    options.client ??
    new RegistryClient({
      caCertificates,
      mirrors: [...settings.registryMirrors],
      userAgent: options.userAgent,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
  return { client, credentials };
}
