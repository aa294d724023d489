// Recovery of a --data-dir journal written by an old bug that stored cluster-scoped objects
// under a namespace: the namespaced "ghost" copies are merged into the one cluster-scoped object.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startCluster, rawRequest } from '../harness/devcluster.js';
import { capturingLogger } from '../harness/log.js';

const key = 'clusterroles.rbac.authorization.k8s.io';

function clusterRole(name: string, rv: number, verb: string, namespace?: string): string {
  const metadata = {
    name,
    uid: `uid-${name}-${rv}`,
    resourceVersion: String(rv),
    creationTimestamp: '2026-11-01T00:00:00Z',
    ...(namespace === undefined ? {} : { namespace }),
  };
  const object = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata,
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: [verb] }],
  };
  return `${JSON.stringify({ t: 'p', k: key, o: object })}\n`;
}

let dir: string;
t.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'olmq-devcluster-ghosts-'));
});
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

interface RoleList {
  items: { metadata: { name: string; namespace?: string }; rules: { verbs: string[] }[] }[];
}

void t.test(
  'journal - namespaced ghosts of cluster-scoped objects are merged on recovery',
  async (t) => {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    writeFileSync(
      join(dataDir, 'snapshot.jsonl'),
      clusterRole('both', 5, 'get') + clusterRole('both', 7, 'list', 'default'),
    );
    // The journal after the snapshot: an older ghost of "stale", and a ghost with no other copy.
    writeFileSync(
      join(dataDir, 'journal.jsonl'),
      clusterRole('stale', 9, 'get') +
        clusterRole('stale', 8, 'watch', 'kube-system') +
        clusterRole('only-ghost', 10, 'delete', 'default'),
    );
    const { log, lines } = capturingLogger('info');
    const fixture = await startCluster({ dataDir, logger: log });
    try {
      const answer = await rawRequest(
        fixture,
        'GET',
        '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      );
      const list = JSON.parse(answer.body) as RoleList;
      const ours = list.items.filter((i) =>
        ['both', 'stale', 'only-ghost'].includes(i.metadata.name),
      );
      t.same(
        ours.map((i) => [i.metadata.name, i.metadata.namespace, i.rules[0]?.verbs[0]]),
        [
          ['both', undefined, 'list'],
          ['only-ghost', undefined, 'delete'],
          ['stale', undefined, 'get'],
        ],
        'one cluster-scoped copy each: the newer one',
      );
      const logged = lines
        .filter((l) => l['msg'] === 'recovery dropped a namespaced copy of a cluster-scoped object')
        .map((l) => [l['name'], l['namespace'], l['kept']]);
      t.same(logged.sort(), [
        ['both', 'default', 'ghost'],
        ['only-ghost', 'default', 'ghost'],
        ['stale', 'kube-system', 'stored'],
      ]);
    } finally {
      await fixture.close();
    }

    // The merged state was written back: a second start finds no ghost.
    const again = capturingLogger('info');
    const second = await startCluster({ dataDir, logger: again.log });
    try {
      const answer = await rawRequest(
        second,
        'GET',
        '/apis/rbac.authorization.k8s.io/v1/clusterroles/only-ghost',
      );
      t.equal(answer.status, 200);
      t.notOk(
        again.lines.some((l) => String(l['msg']).startsWith('recovery dropped')),
        'nothing left to merge',
      );
    } finally {
      await second.close();
    }
  },
);
