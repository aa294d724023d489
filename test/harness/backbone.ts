// Test fixture: a devcluster with olmq's CRDs installed, a real nats-server with the backbone's
// assets, and a KubeClient, all torn down with the test.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { Test } from 'tap';
import { parse } from 'yaml';
import { openBackbone, type Backbone, type BackboneOptions } from '../../shared/bus/backbone.js';
import { KubeClient, type KubeObject } from '../../shared/kube/client.js';
import { startCluster, type ClusterFixture } from '../integration/devcluster-fixture.js';
import { natsServerFor } from './nats.js';
import { repoRoot } from './repo.js';

/** Creates olmq's CRDs (crds/*.yaml) and the olmq-system namespace. */
export async function installOlmApi(client: KubeClient): Promise<void> {
  const dir = join(repoRoot, 'crds');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    await client.create(parse(readFileSync(join(dir, file), 'utf8')) as KubeObject);
  }
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
