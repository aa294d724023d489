// What the install function knows the API lacks, so a strategy's deployments are not read at
// every pass before the one that creates them.
import t from 'tap';
import { KnownAbsent } from '../../functions/install/mirrored.js';

const where = { cluster: 'c1', namespace: 'ns' };

void t.test('known absent - remembered until forgotten, per cluster, namespace and kind', (t) => {
  const absent = new KnownAbsent();
  const key = KnownAbsent.key(where, 'Deployment', 'op');
  t.notOk(absent.has(key), 'nothing known at first');
  absent.add(key);
  t.ok(absent.has(key), 'known once the API answered absent');
  t.notOk(absent.has(KnownAbsent.key({ ...where, cluster: 'c2' }, 'Deployment', 'op')), 'cluster');
  t.notOk(absent.has(KnownAbsent.key({ ...where, namespace: 'x' }, 'Deployment', 'op')), 'ns');
  t.notOk(absent.has(KnownAbsent.key(where, 'ServiceAccount', 'op')), 'kind');
  absent.forget(key);
  t.notOk(absent.has(key), 'forgotten once shown or created');
  t.end();
});

void t.test('known absent - past its limit the oldest are read again', (t) => {
  const absent = new KnownAbsent(2);
  const keys = ['a', 'b', 'c'].map((name) => KnownAbsent.key(where, 'Deployment', name));
  for (const key of keys) absent.add(key);
  t.same(
    keys.map((key) => absent.has(key)),
    [false, true, true],
  );
  t.end();
});
