import t from 'tap';
import {
  certificateSecret,
  certificateStatus,
  issueServingCertificate,
  reusableCertificate,
  serviceHosts,
} from '../../functions/install/certificates.js';

const hosts = serviceHosts('op-service', 'ns1');
const day = 86_400_000;
const issuedAt = new Date('2026-01-01T00:00:00.600Z');

t.test('certificates - a fresh Secret is reused until a day before expiry', async (t) => {
  const cert = await issueServingCertificate(hosts, issuedAt, 3 * day);
  t.equal(cert.issued, true);
  t.equal(cert.notAfter.toISOString(), '2026-01-04T00:00:00.000Z', 'whole seconds, as encoded');
  const secret = certificateSecret('op-service-cert', 'ns1', cert, {});
  const later = new Date(issuedAt.getTime() + day);
  const reused = await reusableCertificate(secret, hosts, later);
  t.match(reused, { caHash: cert.caHash, certPem: cert.certPem });
  t.equal(reused?.issued, undefined, 'reused material is not a rotation');
  t.equal(reused?.notAfter.getTime(), cert.notAfter.getTime());

  const due = new Date(cert.notAfter.getTime() - day + 1_000);
  t.equal(await reusableCertificate(secret, hosts, due), undefined, 'within the last day: rotate');
  t.equal(
    await reusableCertificate(secret, serviceHosts('other-service', 'ns1'), later),
    undefined,
    'hosts it does not name: rotate',
  );
  t.equal(await reusableCertificate(undefined, hosts, later), undefined, 'missing: rotate');
});

t.test('certificates - a Secret whose CA did not sign the certificate is not reused', async (t) => {
  const a = await issueServingCertificate(hosts, issuedAt);
  const b = await issueServingCertificate(hosts, issuedAt);
  const mixed = certificateSecret(
    'op-service-cert',
    'ns1',
    { ...a, caPem: b.caPem, caHash: b.caHash },
    {},
  );
  t.equal(await reusableCertificate(mixed, hosts, issuedAt), undefined);
  const garbled = certificateSecret('op-service-cert', 'ns1', { ...a, certPem: 'not a pem' }, {});
  t.equal(await reusableCertificate(garbled, hosts, issuedAt), undefined, 'malformed: rotate');
});

t.test(
  'certificates - status records rotation times when certificates were issued, or when it has none yet',
  async (t) => {
    const issued = await issueServingCertificate(hosts, issuedAt, 3 * day);
    const times = {
      certsLastUpdated: '2026-01-01T00:00:00Z',
      certsRotateAt: '2026-01-03T00:00:00Z',
    };
    t.same(certificateStatus(new Map([['op', issued]]), issuedAt, true), times);
    t.same(certificateStatus(new Map([['op', issued]]), issuedAt, false), times);
    const { issued: _issued, ...reused } = issued;
    t.equal(certificateStatus(new Map([['op', reused]]), issuedAt, true), undefined);
    t.same(
      certificateStatus(new Map([['op', reused]]), issuedAt, false),
      times,
      'made by a pass whose status write was lost: recorded now',
    );
    t.equal(certificateStatus(undefined, issuedAt, false), undefined);
    t.equal(certificateStatus(new Map(), issuedAt, false), undefined);
  },
);
