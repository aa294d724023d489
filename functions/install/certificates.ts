// Serving certificates for webhooks and owned APIServices (spec §3.2): a fresh CA per install
// (organisation "Red Hat, Inc.", 730 days by default, as upstream) signs a certificate for the
// deployment's Service; the Secret `<deployment>-service-cert` keeps them and is reused while
// fresh (rotation 24 h before either expires, as upstream's DefaultCertMinFresh). Generating
// keys is I/O-like (random), so it happens in load; decisions only read the material.
import { createHash, webcrypto } from 'node:crypto';
// Must precede @peculiar/x509: its dependency tsyringe checks for the Reflect metadata API on load.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { KubeObject } from '../../shared/kube/client.js';
import { kubeTime } from '../../shared/kube/time.js';

/** Certificate material for one deployment's Service. */
export interface ServingCertificate {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** sha256 hex of the CA PEM: the olmcahash annotation. */
  caHash: string;
  /** When the certificate (and its CA) expire, to the second as encoded. */
  notAfter: Date;
  /** Made in this load: the Secret was missing, stale or not ours to reuse (a rotation). */
  issued?: boolean;
}

const day = 24 * 3_600_000;
/** Upstream's certificate lifetime (DefaultCertValidFor): 730 days. */
export const defaultCertificateLifetimeMs = 730 * day;
/** Certificates are replaced this long before they expire (upstream's DefaultCertMinFresh). */
export const rotationMarginMs = day;

/** When a certificate expiring at `notAfter` is due for rotation (upstream's CalculateCertRotatesAt). */
export function rotatesAt(notAfter: Date): Date {
  return new Date(notAfter.getTime() - rotationMarginMs);
}

/** `at` as a Kubernetes timestamp (RFC 3339, whole seconds, as metav1.Time). */
export function kubeTimestamp(at: Date): string {
  return kubeTime(at);
}
const keyAlgorithm: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const signingAlgorithm: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };

/** The CA hash upstream annotates pods and Secrets with. */
export function caHashOf(caPem: string): string {
  return createHash('sha256').update(caPem).digest('hex');
}

/** The host names a Service's certificate covers. */
export function serviceHosts(service: string, namespace: string): string[] {
  return [
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
  ];
}

function serial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

async function keyPem(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** Issues a fresh CA and a serving certificate for `hosts`, both valid for `lifetimeMs`. */
export async function issueServingCertificate(
  hosts: readonly string[],
  now: Date,
  lifetimeMs = defaultCertificateLifetimeMs,
): Promise<ServingCertificate> {
  // Whole seconds: what the certificate encodes, so rotation times computed from it agree.
  const notAfter = new Date(Math.floor((now.getTime() + lifetimeMs) / 1000) * 1000);
  const caKeys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial(),
      name: `CN=olm-selfsigned-${serial().slice(0, 16)}, O=Red Hat\\, Inc.`,
      notBefore: new Date(now.getTime() - 3_600_000),
      notAfter,
      signingAlgorithm,
      keys: caKeys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
      ],
    },
    webcrypto,
  );
  const keys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial(),
      subject: `CN=${hosts[0] ?? 'olm'}, O=Red Hat\\, Inc.`,
      issuer: ca.subjectName,
      notBefore: new Date(now.getTime() - 3_600_000),
      notAfter,
      signingAlgorithm,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(
          hosts.map((value) => ({ type: 'dns' as const, value })),
        ),
      ],
    },
    webcrypto,
  );
  const caPem = ca.toString('pem');
  return {
    caPem,
    certPem: cert.toString('pem'),
    keyPem: await keyPem(keys.privateKey),
    caHash: caHashOf(caPem),
    notAfter,
    issued: true,
  };
}

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const unb64 = (text: unknown): string =>
  typeof text === 'string' ? Buffer.from(text, 'base64').toString('utf8') : '';

/**
 * The material of an existing cert Secret when it is still good for `hosts` at `now`
 * (upstream's shouldRotateCerts, negated): CA and certificate present, parseable, active and
 * not within the rotation margin of expiry, the certificate signed by the CA and naming every
 * host.
 */
export async function reusableCertificate(
  secret: KubeObject | undefined,
  hosts: readonly string[],
  now: Date,
): Promise<ServingCertificate | undefined> {
  if (secret === undefined) return undefined;
  const data = (secret['data'] ?? {}) as Record<string, string>;
  const certPem = unb64(data['tls.crt']);
  const keyPemText = unb64(data['tls.key']);
  // Upstream's key name notwithstanding, olmCAKey holds the CA certificate.
  const caPem = unb64(data['olmCAKey']);
  const caHash = secret.metadata.annotations?.['olmcahash'] ?? '';
  if (certPem === '' || keyPemText === '' || caPem === '' || caHashOf(caPem) !== caHash)
    return undefined;
  try {
    const ca = new x509.X509Certificate(caPem);
    const cert = new x509.X509Certificate(certPem);
    const fresh = (c: x509.X509Certificate): boolean =>
      now.getTime() >= c.notBefore.getTime() && now.getTime() <= rotatesAt(c.notAfter).getTime();
    if (!fresh(ca) || !fresh(cert)) return undefined;
    if (!(await cert.verify({ publicKey: ca, signatureOnly: true }, webcrypto))) return undefined;
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
    const names = new Set((san?.names.items ?? []).map((n) => n.value));
    if (!hosts.every((h) => names.has(h))) return undefined;
    const notAfter = new Date(Math.min(ca.notAfter.getTime(), cert.notAfter.getTime()));
    return { caPem, certPem, keyPem: keyPemText, caHash, notAfter };
  } catch {
    return undefined;
  }
}

/** The Secret keeping a deployment's serving certificate. */
export function certificateSecret(
  name: string,
  namespace: string,
  cert: ServingCertificate,
  labels: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace, labels, annotations: { olmcahash: cert.caHash } },
    data: {
      'tls.crt': b64(cert.certPem),
      'tls.key': b64(cert.keyPem),
      olmCAKey: b64(cert.caPem),
    },
  };
}

/** Whether any of a CSV's certificates was issued in this load: missing or due, so a rotation. */
export function rotationDue(certs: ReadonlyMap<string, ServingCertificate> | undefined): boolean {
  return [...(certs?.values() ?? [])].some((c) => c.issued === true);
}

/**
 * status.certsLastUpdated and status.certsRotateAt once `certs` are installed, when any was
 * issued in this pass (upstream records them only when certificates rotated), or when the status
 * has none yet (`recorded` false): the pass that issued them may have lost its status write to a
 * conflict, and the next one finds them made.
 */
export function certificateStatus(
  certs: ReadonlyMap<string, ServingCertificate> | undefined,
  now: Date,
  recorded: boolean,
): { certsLastUpdated: string; certsRotateAt: string } | undefined {
  const all = [...(certs?.values() ?? [])];
  if (all.length === 0 || (recorded && !all.some((c) => c.issued === true))) return undefined;
  const expires = Math.min(...all.map((c) => c.notAfter.getTime()));
  return {
    certsLastUpdated: kubeTimestamp(now),
    certsRotateAt: kubeTimestamp(rotatesAt(new Date(expires))),
  };
}

/**
 * How long until the earliest of `certs` (reused, so not yet due) is due for rotation, plus a
 * second so that it is past due then; undefined without certificates.
 */
export function rotationWakeMs(
  certs: ReadonlyMap<string, ServingCertificate> | undefined,
  now: Date,
): number | undefined {
  const due = [...(certs?.values() ?? [])]
    .filter((c) => c.issued !== true)
    .map((c) => rotatesAt(c.notAfter).getTime() - now.getTime() + 1_000);
  return due.length === 0 ? undefined : Math.max(1_000, Math.min(...due));
}
