// An API brownout during an install: for a window every write answers 503 or 429 with
// Retry-After. The functions wait it out — the client retries within its window, the function
// host delays without counting failures — so nothing is dead-lettered and the install converges
// once the API is back. The hosts are tuned so that counting would dead-letter: three attempts,
// a client window of 300 ms, a brownout of 6 s.
import t from 'tap';
import { assets } from '../../shared/bus/backbone.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { pipelineFor } from '../harness/pipeline.js';
import { waitFor } from '../harness/wait.js';

t.test(
  'brownout - 503s and 429s with Retry-After on writes mid-install: no dead letters, the install converges',
  async (t) => {
    const { client, fixture, lines, system } = await pipelineFor(t, {
      host: { maxAttempts: 3, maxBackoffMs: 1_000 },
      client: { transientRetryWindowMs: 300 },
    });
    await namespaceWithOperatorGroup(client, 'brown');
    await client.create({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name: 'etcd', namespace: 'brown' },
      spec: {
        name: 'etcd',
        channel: 'singlenamespace-alpha',
        source: 'community',
        sourceNamespace: 'olm',
      },
    });
    const { faults } = fixture.cluster;
    // 3 s of 503s, then 3 s of 429s asking for a second's patience, on every write.
    const writes = ['create', 'update', 'patch', 'delete', 'deletecollection'];
    const unavailable = faults.inject({
      verbs: writes,
      action: { kind: 'answer', code: 503 },
      forMs: 3_000,
    });
    await waitFor('the 503s to end', () => !unavailable.active, 10_000, 50);
    const throttled = faults.inject({
      verbs: writes,
      action: { kind: 'answer', code: 429, retryAfterSeconds: 1 },
      forMs: 3_000,
    });
    await waitFor('the 429s to end', () => !throttled.active, 10_000, 50);
    t.ok(
      unavailable.hits > 0 && throttled.hits > 0,
      `writes were refused (${unavailable.hits} 503s, ${throttled.hits} 429s)`,
    );
    t.ok(
      lines.some(
        (l) => l['msg'] === 'Kubernetes API unavailable; retrying without counting a failure',
      ),
      'functions waited the brownout out',
    );

    await waitForCsvPhase(client, 'brown', 'etcdoperator.v0.9.4', 'Succeeded', undefined, 90_000);
    const subscription = await client.get<KubeObject & { status?: { installedCSV?: string } }>({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      namespace: 'brown',
      name: 'etcd',
    });
    t.equal(subscription?.status?.installedCSV, 'etcdoperator.v0.9.4');
    const dead = await system.backbone.jsm.streams.info(assets.deadStream);
    t.equal(dead.state.messages, 0, 'nothing was dead-lettered');
    t.same(
      lines.filter((l) => l['msg'] === 'work dead-lettered after repeated failures'),
      [],
    );
  },
);
