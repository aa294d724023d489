// The serving certificate of replicated package servers in a cluster: the first replica makes a
// CA and a certificate for the Service and keeps them in a Secret; the others read it; each
// sets the APIService's caBundle to that CA (as upstream OLM manages packageserver's
// certificate), so `kubectl apply -k k8s/` needs no certificate tooling.
import { createCertificateAuthority, issueCertificate } from '../shared/kube/certificates.js';
import type { KubeClient, KubeObject } from '../shared/kube/client.js';
import { isAlreadyExists } from '../shared/kube/errors.js';
import { packagesGroup, packagesVersion } from './manifest.js';
import type { PackageServiceRef } from './types.js';

/** A serving certificate and the CA clients verify it with (PEM). */
export interface ServingMaterial {
  certPem: string;
  keyPem: string;
  caPem: string;
}

type SecretObject = KubeObject & { type?: string; data?: Record<string, string> };

function fromSecret(secret: SecretObject | undefined): ServingMaterial | undefined {
  const data = secret?.data ?? {};
  const decode = (key: string): string => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
  const material = {
    certPem: decode('tls.crt'),
    keyPem: decode('tls.key'),
    caPem: decode('ca.crt'),
  };
  return material.certPem !== '' && material.keyPem !== '' && material.caPem !== ''
    ? material
    : undefined;
}

/** Makes a CA and a serving certificate for the Service's DNS names. */
export async function createServingMaterial(service: PackageServiceRef): Promise<ServingMaterial> {
  const ca = await createCertificateAuthority('olmq-packageserver-ca');
  const dns = `${service.name}.${service.namespace}.svc`;
  const leaf = await issueCertificate(ca, {
    commonName: dns,
    hosts: [dns, `${dns}.cluster.local`, 'localhost'],
    usage: 'server',
  });
  return { certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: ca.certPem };
}

/** The serving material in Secret `secretName` of the Service's namespace, created if absent. */
export async function sharedServingMaterial(
  client: KubeClient,
  service: PackageServiceRef,
  secretName: string,
): Promise<ServingMaterial> {
  const ref = { apiVersion: 'v1', kind: 'Secret', namespace: service.namespace, name: secretName };
  const existing = fromSecret(await client.get<SecretObject>(ref));
  if (existing !== undefined) return existing;
  const material = await createServingMaterial(service);
  const encode = (text: string): string => Buffer.from(text).toString('base64');
  try {
    await client.create<SecretObject>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: secretName,
        namespace: service.namespace,
        labels: {
          'app.kubernetes.io/name': 'olmq',
          'app.kubernetes.io/component': 'packageserver',
        },
      },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': encode(material.certPem),
        'tls.key': encode(material.keyPem),
        'ca.crt': encode(material.caPem),
      },
    });
    return material;
  } catch (error) {
    // Another replica made it first: use theirs.
    if (!isAlreadyExists(error)) throw error;
    const raced = fromSecret(await client.get<SecretObject>(ref));
    if (raced === undefined)
      throw new Error(`Secret ${service.namespace}/${secretName} holds no serving certificate`, {
        cause: error,
      });
    return raced;
  }
}

/** Sets the APIService's caBundle to `caPem` when it differs. */
export async function publishCaBundle(client: KubeClient, caPem: string): Promise<void> {
  const ref = {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    name: `${packagesVersion}.${packagesGroup}`,
  };
  const current = await client.get<KubeObject & { spec?: { caBundle?: string } }>(ref);
  const caBundle = Buffer.from(caPem).toString('base64');
  if (current === undefined || current.spec?.caBundle === caBundle) return;
  await client.patch(ref, 'merge', { spec: { caBundle, insecureSkipTLSVerify: null } });
}
