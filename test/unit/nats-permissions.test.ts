import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { componentUsers, authorizationConfig } from '../../cli/nats-config.js';
import type { Permissions } from '../../shared/bus/permissions.js';
import { parse, parseAllDocuments } from 'yaml';
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
  // Per-cluster consumers are created with a filter, which must lie in the queue's own work.
  const create = '$JS.API.CONSUMER.CREATE.OLMQ_WORK';
  t.ok(mayPublish('olmq-plan', `${create}.plan-work-c1.olmq.work.plan.c1.>`));
  t.ok(mayPublish('olmq-rbac', `${create}.rbac-sweep-work-c1.olmq.work.rbac-sweep.c1`));
  t.notOk(mayPublish('olmq-plan', `${create}.plan-work-c1.olmq.work.resolve.c1.>`));
  t.notOk(mayPublish('olmq-plan', `${create}.plan-work-c1.olmq.work.>`));
  t.notOk(mayPublish('olmq-plan', `${create}.plan-work-c1`), 'not without a filter');
  t.notOk(mayPublish('olmq-plan', '$JS.API.CONSUMER.DURABLE.CREATE.OLMQ_WORK.plan-work-c1'));
  t.ok(mayPublish('olmq-plan', '$JS.API.CONSUMER.MSG.NEXT.OLMQ_WORK.plan-work-c1'));
  t.ok(mayPublish('olmq-plan', '$JS.API.CONSUMER.DELETE.OLMQ_WORK.plan-work'), 'pre-pool');
  t.notOk(mayPublish('olmq-plan', '$JS.API.CONSUMER.DELETE.OLMQ_WORK.resolve-work'));
  t.ok(mayPublish('olmq-plan', '$KV.olmq_leases.plan.c1.ns'));
  t.notOk(mayPublish('olmq-plan', '$KV.olmq_leases.resolve.c1.ns'));
  t.notOk(mayPublish('olmq-packageserver', 'olmq.work.plan.c1.ns'));
  t.notOk(mayPublish('olmq-plan', '$JS.API.STREAM.DELETE.OLMQ_WORK'));
  t.end();
});

t.test(
  "nats permissions - every component subscribes to its own inbox, functions also to their consumers' leader elections",
  (t) => {
    const elections = [
      '$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.OLMQ_WORK.*',
      '$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.KV_olmq_objects.*',
    ];
    for (const [user, permissions] of users) {
      const consumes = !['olmq-watcher', 'olmq-packageserver'].includes(user);
      t.same(permissions.subscribe, [`_INBOX.${user}.>`, ...(consumes ? elections : [])], user);
    }
    t.end();
  },
);

t.test('nats permissions - k8s/nats-auth.conf is generated from the current code', (t) => {
  const onDisk = readFileSync(join(repoRoot, 'k8s', 'nats-auth.conf'), 'utf8');
  t.equal(onDisk, authorizationConfig(), 'run `npm run gen:docs` after changing permissions');
  t.end();
});

t.test('nats permissions - docker-compose runs NATS with authentication on loopback only', (t) => {
  const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), {
    merge: true,
  }) as {
    services: Record<
      string,
      { command?: string[]; ports?: string[]; environment?: Record<string, string> }
    >;
  };
  const { nats, ...olmq } = compose.services;
  t.ok(nats?.command?.includes('/etc/nats/nats-auth.conf'), 'the generated users are loaded');
  for (const port of nats?.ports ?? []) t.match(port, /^127\.0\.0\.1:/, `${port} on loopback`);
  for (const [name, service] of Object.entries(olmq)) {
    const user = service.environment?.['NATS_USER'] ?? '';
    t.equal(user, `olmq-${name}`, `${name} connects as its own user`);
    t.ok(users.has(user), `${user} is a user of k8s/nats-auth.conf`);
    t.match(service.environment?.['NATS_PASSWORD'], /^\$\{OLMQ_[A-Z_]+_PASSWORD:\?/);
  }
  t.end();
});

t.test('nats permissions - every k8s Deployment connects as its component user', (t) => {
  const dir = join(repoRoot, 'k8s');
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  let seen = 0;
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const object = doc.toJS() as {
        kind?: string;
        spec?: {
          template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } };
        };
      } | null;
      if (object?.kind !== 'Deployment') continue;
      for (const container of object.spec?.template?.spec?.containers ?? []) {
        const env = container.env ?? [];
        if (!env.some((e) => e.name === 'NATS_URL')) continue;
        const user = env.find((e) => e.name === 'NATS_USER')?.value ?? '';
        t.ok(users.has(user), `${file}: NATS_USER ${user} is a user of k8s/nats-auth.conf`);
        t.ok(
          env.some((e) => e.name === 'NATS_PASSWORD'),
          `${file}: NATS_PASSWORD set`,
        );
        seen += 1;
      }
    }
  }
  t.equal(seen, 9, 'the watcher, seven functions and the package server');
  t.end();
});
