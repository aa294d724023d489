// The cluster's secrets: its certificates (CA, serving, admin client) and the ServiceAccount
// token signing key, made at the first start and kept in <dataDir>/pki.json (mode 0600) when
// there is a data directory, so kubeconfigs and tokens stay valid across restarts.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createClusterCertificates,
  createServiceAccountSigningKey,
  type ClusterCertificates,
} from '../auth/index.js';

/** What pki.json holds. */
export interface ClusterSecrets {
  certificates: ClusterCertificates;
  signingKeyPem: string;
}

/** The secrets kept in `dataDir`, or new ones (saved there when there is one) for `hosts`. */
export async function loadSecrets(
  dataDir: string | undefined,
  hosts: string[],
): Promise<ClusterSecrets> {
  const file = dataDir === undefined ? undefined : join(dataDir, 'pki.json');
  if (file !== undefined && existsSync(file))
    return JSON.parse(readFileSync(file, 'utf8')) as ClusterSecrets;
  const secrets: ClusterSecrets = {
    certificates: await createClusterCertificates(hosts),
    signingKeyPem: createServiceAccountSigningKey(),
  };
  if (file !== undefined) writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  return secrets;
}
