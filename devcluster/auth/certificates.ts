// Certificates of the devcluster: one CA signs the serving certificate and the admin client
// certificate. ECDSA P-256 keys: fast to make, accepted by node:tls and Go (kubectl).
import { isIP } from 'node:net';
import { webcrypto } from 'node:crypto';
// Must precede @peculiar/x509: its dependency tsyringe checks for the Reflect metadata API on load.
import 'reflect-metadata'; // @peculiar/x509's dependency injection needs the Reflect metadata API
import * as x509 from '@peculiar/x509';
import type { ClusterCertificates } from './index.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const keyAlgorithm: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const signingAlgorithm: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const hour = 3_600_000;
const day = 24 * hour;

function randomSerialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  // Positive and without a leading zero byte: Go rejects negative serials.
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
}

/** Subject alternative names for `hosts`: IP literals as IP entries, the rest as DNS names. */
function subjectAlternativeNames(hosts: readonly string[]): x509.JsonGeneralName[] {
  return hosts.map((host) => {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    return isIP(bare) === 0 ? { type: 'dns', value: host } : { type: 'ip', value: bare };
  });
}

interface Issuer {
  certificate: x509.X509Certificate;
  keys: CryptoKeyPair;
}

async function issueLeaf(
  issuer: Issuer,
  subject: string,
  usage: x509.ExtendedKeyUsage,
  now: Date,
  extra: x509.Extension[] = [],
): Promise<{ certPem: string; keyPem: string }> {
  const keys = await generateKeys();
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerialNumber(),
      subject,
      issuer: issuer.certificate.subjectName,
      notBefore: new Date(now.getTime() - hour),
      notAfter: new Date(now.getTime() + 365 * day),
      signingAlgorithm,
      publicKey: keys.publicKey,
      signingKey: issuer.keys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([usage]),
        await x509.AuthorityKeyIdentifierExtension.create(issuer.keys.publicKey, false, webcrypto),
        ...extra,
      ],
    },
    webcrypto,
  );
  return { certPem: certificate.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}

/** A fresh CA, a serving certificate for `hosts` (DNS names and IPs) and an admin client certificate (CN=admin, O=system:masters). */
export async function createClusterCertificates(
  hosts: readonly string[],
): Promise<ClusterCertificates> {
  const now = new Date();
  const caKeys = await generateKeys();
  const caCertificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerialNumber(),
      name: 'CN=olmq-devcluster-ca',
      notBefore: new Date(now.getTime() - hour),
      notAfter: new Date(now.getTime() + 10 * 365 * day),
      signingAlgorithm,
      keys: caKeys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign |
            x509.KeyUsageFlags.cRLSign |
            x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  const issuer: Issuer = { certificate: caCertificate, keys: caKeys };
  const server = await issueLeaf(
    issuer,
    'CN=kube-apiserver',
    x509.ExtendedKeyUsage.serverAuth,
    now,
    [new x509.SubjectAlternativeNameExtension(subjectAlternativeNames(hosts))],
  );
  const admin = await issueLeaf(
    issuer,
    'CN=admin, O=system:masters',
    x509.ExtendedKeyUsage.clientAuth,
    now,
  );
  return {
    caCertPem: caCertificate.toString('pem'),
    caKeyPem: await privateKeyPem(caKeys.privateKey),
    serverCertPem: server.certPem,
    serverKeyPem: server.keyPem,
    adminCertPem: admin.certPem,
    adminKeyPem: admin.keyPem,
  };
}
