// Test fixture: the whole of olmq as `olmq up` runs it, on the devcluster — the watcher and every
// built-in function — with the catalog `community` in olm served by a real registry server over
// catalogs/example. Torn down with the test.
import type { Test } from 'tap';
import type { KubeClient } from '../../shared/kube/client.js';
import type { System, SystemOptions } from '../../system/index.js';
import type { ClusterFixture } from './devcluster.js';
import { capturingLogger } from './log.js';
import { communityCatalogFor } from './subscription.js';
import { systemFor } from './system.js';

export interface Pipeline {
  fixture: ClusterFixture;
  client: KubeClient;
  lines: Record<string, unknown>[];
  system: System;
}

/**
 * The pipeline; `options` override the system's test defaults (function host options are
 * merged), and `catalogDir` is the FBC directory the registry serves (default the example catalog).
 */
export async function pipelineFor(
  t: Test,
  options: Pick<SystemOptions, 'client'> & {
    host?: NonNullable<SystemOptions['functions']>['host'];
    catalogDir?: string;
  } = {},
): Promise<Pipeline> {
  const { log, lines } = capturingLogger('warn');
  const { fixture, client, system } = await systemFor(t, {
    log,
    backbone: { leaseTtlMs: 2_000 },
    watcher: { identity: 'test-watcher', leaseName: 'olmq-watcher' },
    functions: {
      host: { baseBackoffMs: 20, contentionDelayMs: 20, ...options.host },
      stopGraceMs: 1_000,
    },
    ...(options.client === undefined
      ? {}
      : { client: { userAgent: 'olmq-test', ...options.client } }),
  });
  await communityCatalogFor(t, client, options.catalogDir);
  return { fixture, client, lines, system };
}
