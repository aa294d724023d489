import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { componentUsers, exampleServerConfig } from '../../cli/nats-config.js';
import type { Permissions } from '../../shared/bus/permissions.js';
import { repoRoot } from '../harness/repo.js';

const users = new Map(componentUsers((u) => u).map((u) => [u.user, u.permissions]));

function permissionsOf(user: string): Permissions {
  const found = users.get(user);
  if (found === undefined) throw new Error(`no user ${user}`);
  return found;
}

// NATS subject matching, enough for these checks: `*` one token, `>` the rest.
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

const mayPublish = (user: string, subject: string): boolean =>
  permissionsOf(user).publish.some((p) => matches(p, subject));

t.test('nats permissions - only the watcher writes cluster objects into the mirror', (t) => {
  const object = '$KV.olmq_objects.c1.ClusterServiceVersion.ns.my-csv';
  t.ok(mayPublish('olmq-watcher', object));
  for (const user of ['olmq-install', 'olmq-catalog', 'olmq-resolve', 'olmq-packageserver'])
    t.notOk(mayPublish(user, object), user);
  t.ok(mayPublish('olmq-catalog', '$KV.olmq_objects.c1.CatalogIndex.olm.community'));
  t.ok(mayPublish('olmq-resolve', '$KV.olmq_objects.c1.Resolution.ns.-'));
  t.notOk(mayPublish('olmq-plan', '$KV.olmq_objects.c1.Resolution.ns.-'));
  t.end();
});

t.test('nats permissions - only the catalog function writes catalog content', (t) => {
  const chunk = '$O.olmq_catalogs.C.abc';
  t.ok(mayPublish('olmq-catalog', chunk));
  for (const user of ['olmq-watcher', 'olmq-install', 'olmq-plan', 'olmq-packageserver'])
    t.notOk(mayPublish(user, chunk), user);
  t.end();
});

t.test("nats permissions - a function takes only its own queues' work and leases", (t) => {
  t.ok(mayPublish('olmq-plan', '$JS.API.CONSUMER.MSG.NEXT.OLMQ_WORK.plan-work'));
  t.notOk(mayPublish('olmq-plan', '$JS.API.CONSUMER.MSG.NEXT.OLMQ_WORK.resolve-work'));
  t.ok(mayPublish('olmq-plan', '$KV.olmq_leases.plan.c1.ns'));
  t.notOk(mayPublish('olmq-plan', '$KV.olmq_leases.resolve.c1.ns'));
  t.notOk(mayPublish('olmq-packageserver', 'olmq.work.plan.c1.ns'));
  t.notOk(mayPublish('olmq-plan', '$JS.API.STREAM.DELETE.OLMQ_WORK'));
  t.end();
});

t.test('nats permissions - every component subscribes to its own inbox only', (t) => {
  for (const [user, permissions] of users)
    t.same(permissions.subscribe, [`_INBOX.${user}.>`], user);
  t.end();
});

t.test('nats permissions - k8s/nats-server.conf is generated from the current code', (t) => {
  const onDisk = readFileSync(join(repoRoot, 'k8s', 'nats-server.conf'), 'utf8');
  t.equal(onDisk, exampleServerConfig(), 'run `npm run gen:docs` after changing permissions');
  t.end();
});
