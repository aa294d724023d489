// Test fixture: a devcluster with olmq's CRDs installed, a real nats-server with the backbone's
// assets, and a KubeClient, all torn down with the test.
import { connect } from '@nats-io/transport-node';
import type { Test } from 'tap';
import { openBackbone, type Backbone, type BackboneOptions } from '../../shared/bus/backbone.js';
import { KubeClient } from '../../shared/kube/client.js';
import { ensureOlmApi } from '../../shared/kube/olm-api.js';
import { startCluster, type ClusterFixture } from './devcluster.js';
import { natsServerFor } from './nats.js';

/** Installs olmq's CRDs (ensureOlmApi) and creates the olmq-system namespace. */
export async function installOlmApi(client: KubeClient): Promise<void> {
  await ensureOlmApi(client);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'olmq-system' } });
}

/** A devcluster (with the OLM API) and its client, closed at t's teardown. */
export async function clusterFor(
  t: Test,
  id = 'c1',
): Promise<{ fixture: ClusterFixture; client: KubeClient }> {
  const fixture = await startCluster();
  const client = await KubeClient.fromKubeConfig(id, fixture.kubeConfig, {
    userAgent: 'olmq-test',
  });
  t.teardown(async () => {
    client.close();
    await fixture.close();
  });
  await installOlmApi(client);
  return { fixture, client };
}

/** A nats-server with the backbone's streams and buckets, closed at t's teardown. */
export async function backboneFor(
  t: Test,
  options: Partial<BackboneOptions> = {},
): Promise<Backbone> {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  return openBackbone(nc, options);
}
