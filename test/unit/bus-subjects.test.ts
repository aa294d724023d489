import t from 'tap';
import {
  decodeToken,
  encodeToken,
  mirrorKindFilter,
  objectKey,
  parseObjectKey,
  parseWorkSubject,
  workFilter,
  workSubject,
} from '../../shared/bus/subjects.js';
import { workConsumerName, triggerConsumerName } from '../../shared/bus/work-queue.js';

t.test(
  'bus subjects - names with dots, colons and other characters round-trip as one token',
  (t) => {
    for (const name of [
      'etcd.v0.9.4',
      'system:auth-delegator',
      'olm.og.g1.admin-8c5',
      'a_b=c',
      'ünï',
      '',
      '-',
    ]) {
      const token = encodeToken(name);
      t.match(token, /^[-_=a-zA-Z0-9]+$/, `"${name}" encodes to a valid token`);
      t.equal(decodeToken(token), name, `"${name}" round-trips`);
    }
    t.equal(encodeToken('etcd.v0.9.4'), 'etcd_v0_9_4', 'dots stay readable');
    t.end();
  },
);

t.test('bus subjects - malformed tokens are rejected', (t) => {
  t.throws(() => decodeToken('a=G1'), /malformed token/);
  t.throws(() => decodeToken('a.b'), /malformed token/);
  t.end();
});

t.test('bus subjects - object keys round-trip, cluster-scoped objects included', (t) => {
  const namespaced = {
    cluster: 'prod-eu',
    kind: 'ClusterServiceVersion',
    namespace: 'ops',
    name: 'etcd.v0.9.4',
  };
  t.equal(objectKey(namespaced), 'prod-eu.ClusterServiceVersion.ops.etcd_v0_9_4');
  t.same(parseObjectKey(objectKey(namespaced)), namespaced);
  const clusterScoped = {
    cluster: 'c',
    kind: 'ClusterRole',
    namespace: '',
    name: 'system:aggregate-to-admin',
  };
  t.same(parseObjectKey(objectKey(clusterScoped)), clusterScoped);
  t.throws(() => parseObjectKey('too.few'), /malformed object key/);
  t.end();
});

t.test('bus subjects - work subjects carry function, cluster and key', (t) => {
  const subject = workSubject('copy-csv', 'c1', ['namespace', 'team.a']);
  t.equal(subject, 'olmq.work.copy-csv.c1.namespace.team_a');
  t.same(parseWorkSubject(subject), {
    fn: 'copy-csv',
    cluster: 'c1',
    key: ['namespace', 'team.a'],
  });
  t.throws(() => parseWorkSubject('other.work.x.y.z'), /malformed work subject/);
  t.end();
});

t.test('bus subjects - a pool filters one cluster: work, wordless work and mirror changes', (t) => {
  t.equal(workFilter('resolve'), 'olmq.work.resolve.>', 'every cluster');
  t.equal(workFilter('resolve', 'eu.1'), 'olmq.work.resolve.eu_1.>');
  // A key of no words is the cluster's one subject, which `>` would not match.
  t.equal(workFilter('rbac-sweep', 'eu.1', true), workSubject('rbac-sweep', 'eu.1', []));
  t.equal(mirrorKindFilter('Subscription'), '$KV.olmq_objects.*.Subscription.*.*');
  t.equal(mirrorKindFilter('Subscription', 'eu.1'), '$KV.olmq_objects.eu_1.Subscription.*.*');
  t.equal(workConsumerName('resolve', 'eu.1'), 'resolve-work-eu_1');
  t.equal(
    triggerConsumerName('resolve', 'Subscription', 'eu.1'),
    'resolve-trigger-Subscription-eu_1',
  );
  t.equal(workConsumerName('resolve'), 'resolve-work', 'the consumer over every cluster');
  t.end();
});
