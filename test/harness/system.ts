// Test fixture: olmq started as `olmq up` starts it (system/, startSystem) on an in-process
// devcluster (cluster c1, pods ready at once) and a real nats-server, with its kubeconfig in a
// temp dir for kubectl; stopped at the test's teardown.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import type { KubeClient } from '../../shared/kube/client.js';
import { startSystem, type System, type SystemOptions } from '../../system/index.js';
import type { ClusterFixture } from './devcluster.js';

/** A running system and its devcluster as the devcluster suites' fixture. */
export interface SystemFixture {
  system: System;
  /** The devcluster, for kubectl and raw requests. */
  fixture: ClusterFixture;
  /** The system's API client. */
  client: KubeClient;
}

/** Starts the system `options` describe (test defaults for the rest), stopped at t's teardown. */
export async function systemFor(
  t: Test,
  options: Omit<SystemOptions, 'kubeconfig' | 'kubeconfigOut'>,
): Promise<SystemFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-system-test-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  let system: System | undefined;
  const close = async (): Promise<void> => {
    await system?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    system = await startSystem({
      podReadyDelayMs: 0,
      clusterId: 'c1',
      client: { userAgent: 'olmq-test' },
      ...options,
      kubeconfigOut: kubeconfigPath,
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  t.teardown(close);
  const { devcluster } = system;
  if (devcluster === undefined) throw new Error('the system runs no devcluster');
  const fixture: ClusterFixture = {
    cluster: devcluster,
    dir,
    kubeconfigPath,
    kubeConfig: system.cluster.kubeConfig,
    close,
  };
  return { system, fixture, client: system.client };
}
