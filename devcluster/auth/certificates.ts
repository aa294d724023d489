// Certificates of the devcluster: one CA signs the serving certificate and the admin client
// certificate (shared/kube/certificates.ts makes them).
import { createCertificateAuthority, issueCertificate } from '../../shared/kube/certificates.js';
import type { ClusterCertificates } from './types.js';

/** A fresh CA, a serving certificate for `hosts` (DNS names and IPs) and an admin client certificate (CN=admin, O=system:masters). */
export async function createClusterCertificates(
  hosts: readonly string[],
): Promise<ClusterCertificates> {
  const now = new Date();
  const ca = await createCertificateAuthority('olmq-devcluster-ca', now);
  const server = await issueCertificate(
    ca,
    { commonName: 'kube-apiserver', hosts, usage: 'server' },
    now,
  );
  const admin = await issueCertificate(
    ca,
    { commonName: 'admin', organizations: ['system:masters'], usage: 'client' },
    now,
  );
  return {
    caCertPem: ca.certPem,
    caKeyPem: ca.keyPem,
    serverCertPem: server.certPem,
    serverKeyPem: server.keyPem,
    adminCertPem: admin.certPem,
    adminKeyPem: admin.keyPem,
  };
}
