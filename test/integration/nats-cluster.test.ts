// olmq on a 3-node NATS cluster with R3 streams: connected to one server through the server
// list, it rides out a SIGKILL of another server and then of the one it is connected to
// (reconnecting to the list), and Subscriptions install in both windows; the killed servers
// come back and the streams keep three replicas.
import t from 'tap';
import { listDeadLetters } from '../../shared/bus/dead-letters.js';
import { assets, kvStream } from '../../shared/bus/subjects.js';
import { capturingLogger } from '../harness/log.js';
import { natsClusterFor } from '../harness/nats-cluster.js';
import { communityCatalogFor, etcdSucceeded, subscribeEtcd } from '../harness/subscription.js';
import { systemFor } from '../harness/system.js';
import { waitFor } from '../harness/wait.js';

t.test(
  'nats cluster - R3 streams survive SIGKILL of another server and of the connected one',
  async (t) => {
    const cluster = await natsClusterFor(t);
    const { log } = capturingLogger('warn');
    const { system, client } = await systemFor(t, {
      log,
      natsUrl: cluster.urls,
      backbone: { leaseTtlMs: 2_000, replicas: 3 },
      watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
      functions: { host: { baseBackoffMs: 20, contentionDelayMs: 20 }, stopGraceMs: 1_000 },
    });
    const { nc, backbone } = system;
    for (const stream of [assets.workStream, assets.deadStream, kvStream(assets.objects)]) {
      const info = await backbone.jsm.streams.info(stream);
      t.equal(info.config.num_replicas, 3, `${stream} has three replicas`);
    }
    await communityCatalogFor(t, client);

    const connectedIndex = (): number =>
      cluster.servers.findIndex((s) => nc.getServer().endsWith(`:${s.port}`));
    const connected = connectedIndex();
    t.not(connected, -1, 'connected to a server of the list');
    const other = (connected + 1) % 3;

    // Another server dies: olmq keeps its connection and installs through the remaining quorum.
    await cluster.kill(other);
    await subscribeEtcd(client, 'while-other-down');
    await etcdSucceeded(client, 'while-other-down', 120_000);
    t.pass(`installed while server ${other} was down`);
    await cluster.restart(other);

    // The server olmq is connected to dies: it reconnects to another server of the list.
    await cluster.kill(connected);
    await waitFor(
      'olmq to reconnect to another server',
      () => !nc.isClosed() && connectedIndex() !== connected && connectedIndex() !== -1,
      30_000,
      100,
    );
    await subscribeEtcd(client, 'while-connected-down');
    await etcdSucceeded(client, 'while-connected-down', 120_000);
    t.pass(`installed after server ${connected} (olmq's) was killed`);
    await cluster.restart(connected);
    await waitFor(
      'the restarted server to hold a current replica of the work stream',
      async () => {
        const info = await backbone.jsm.streams.info(assets.workStream);
        const replicas = info.cluster?.replicas ?? [];
        return replicas.length === 2 && replicas.every((r) => r.current && !r.offline);
      },
      60_000,
      250,
    );
    const dead = await listDeadLetters(backbone);
    t.same(
      dead.map(({ letter }) => `${letter.function} ${letter.key.join('/')}: ${letter.error}`),
      [],
      'no work was dead-lettered',
    );
  },
);
