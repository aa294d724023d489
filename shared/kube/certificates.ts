// Small X.509 toolkit for serving and client certificates olmq makes itself: a self-signed CA
// and leaf certificates it issues. The package server uses it for its serving certificate when
// none is mounted, the devcluster for its CA, serving and admin certificates and its aggregation
// layer's front-proxy client certificate.
// ECDSA P-256 keys: quick to make, accepted by node:tls and by Go clients.
import { isIP } from 'node:net';
import { webcrypto } from 'node:crypto';
// Must precede @peculiar/x509: its dependency tsyringe checks for the Reflect metadata API on load.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/** A certificate authority able to issue leaves. */
export interface CertificateAuthority {
  /** The CA certificate (PEM). */
  certPem: string;
  /** Its private key (PKCS#8 PEM). */
  keyPem: string;
}

/** A certificate with its key. */
export interface IssuedCertificate {
  /** The certificate (PEM). */
  certPem: string;
  /** Its private key (PKCS#8 PEM). */
  keyPem: string;
}

/** What a leaf certificate is for and who it names. */
export interface LeafRequest {
  /** Subject common name (a user name for client certificates). */
  commonName: string;
  /** Subject organizations (groups for client certificates). */
  organizations?: readonly string[];
  /** DNS names and IP addresses, IPv6 ones bare or in brackets (serving certificates). */
  hosts?: readonly string[];
  /** serverAuth for serving certificates, clientAuth for client certificates. */
  usage: 'server' | 'client';
}

const keyAlgorithm: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const signingAlgorithm: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const hour = 3_600_000;
const day = 24 * hour;

function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  // Positive and without a leading zero byte: Go rejects negative serials.
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

async function keyPemOf(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

async function importKeys(ca: CertificateAuthority): Promise<{
  certificate: x509.X509Certificate;
  privateKey: webcrypto.CryptoKey;
}> {
  const certificate = new x509.X509Certificate(ca.certPem);
  const der = x509.PemConverter.decodeFirst(ca.keyPem);
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, keyAlgorithm, true, ['sign']);
  return { certificate, privateKey };
}

// RFC 4514 subject: organizations before the common name is how Go prints it; order is free.
function subjectOf(commonName: string, organizations: readonly string[]): string {
  const escape = (value: string): string => value.replace(/([,+"\\<>;=])/g, '\\$1');
  return [`CN=${escape(commonName)}`, ...organizations.map((o) => `O=${escape(o)}`)].join(', ');
}

/** Subject alternative names for `hosts`: IP literals as IP entries, the rest as DNS names. */
function subjectAlternativeNames(hosts: readonly string[]): x509.JsonGeneralName[] {
  return hosts.map((host) => {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    return isIP(bare) === 0 ? { type: 'dns', value: host } : { type: 'ip', value: bare };
  });
}

/** A new self-signed CA named `commonName`, valid for ten years. */
export async function createCertificateAuthority(
  commonName: string,
  now = new Date(),
): Promise<CertificateAuthority> {
  const keys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialNumber(),
      name: subjectOf(commonName, []),
      notBefore: new Date(now.getTime() - hour),
      notAfter: new Date(now.getTime() + 10 * 365 * day),
      signingAlgorithm,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign |
            x509.KeyUsageFlags.cRLSign |
            x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return { certPem: certificate.toString('pem'), keyPem: await keyPemOf(keys.privateKey) };
}

/** A leaf certificate signed by `ca`, valid for a year. */
export async function issueCertificate(
  ca: CertificateAuthority,
  leaf: LeafRequest,
  now = new Date(),
): Promise<IssuedCertificate> {
  const issuer = await importKeys(ca);
  const keys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension([
      leaf.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
    ]),
    // As Go's x509.CreateCertificate does: names the CA's key, for chain building.
    await x509.AuthorityKeyIdentifierExtension.create(
      issuer.certificate.publicKey,
      false,
      webcrypto,
    ),
  ];
  const hosts = leaf.hosts ?? [];
  if (hosts.length > 0)
    extensions.push(new x509.SubjectAlternativeNameExtension(subjectAlternativeNames(hosts)));
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(),
      subject: subjectOf(leaf.commonName, leaf.organizations ?? []),
      issuer: issuer.certificate.subjectName,
      notBefore: new Date(now.getTime() - hour),
      notAfter: new Date(now.getTime() + 365 * day),
      signingAlgorithm,
      publicKey: keys.publicKey,
      signingKey: issuer.privateKey,
      extensions,
    },
    webcrypto,
  );
  return { certPem: certificate.toString('pem'), keyPem: await keyPemOf(keys.privateKey) };
}
