// Benchmark of dead work surfacing: the InstallPlan of a bundle whose CRDs are
// apiextensions.k8s.io/v1beta1 (not served by the devcluster, nor by kube-apiserver >= 1.22),
// on the devcluster with a real nats-server, the watcher and the install (and rbac) function in
// this process, with the install function's default retry window (upstream's minute) unless
// --window-ms says otherwise.
// Run (after `npm run build`):
//   node dist/bench/dead-work.js [--window-ms 60000]
// Prints one JSON object: when the plan first said it was retrying and when it was Failed (ms
// after its creation), the message, and the dead letters left (expected: none).
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { installFunction } from '../functions/install/index.js';
import { createFunction as createRbac } from '../functions/rbac/index.js';
import { listDeadLetters } from '../shared/bus/dead-letters.js';
import { startSystem } from '../system/index.js';
import { createInstallPlan, smallBundle } from '../test/harness/install-plan.js';

const { values } = parseArgs({ options: { 'window-ms': { type: 'string' } } });
const windowMs = values['window-ms'] === undefined ? undefined : Number(values['window-ms']);

const system = await startSystem({
  log: pino({ level: 'warn' }),
  podReadyDelayMs: 0,
  clusterId: 'c1',
  client: { userAgent: 'olmq-dead-work' },
  namespaces: ['olmq-system'],
  watcher: { identity: 'bench', leaseName: 'olmq-watcher', registry: new Registry() },
  functions: {
    table: {
      install: () =>
        Promise.resolve(
          installFunction(windowMs === undefined ? {} : { installPlanRetryTimeoutMs: windowMs }),
        ),
      rbac: () => Promise.resolve(createRbac),
    },
    stopGraceMs: 1_000,
  },
});
const { client } = system;
try {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
  await client.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: 'ns1' },
    spec: { targetNamespaces: ['ns1'] },
  });
  const bundle = await smallBundle('etcd', 'etcdoperator.v0.9.4');
  for (const o of bundle.others)
    if (o.kind === 'CustomResourceDefinition') o.apiVersion = 'apiextensions.k8s.io/v1beta1';
  const started = performance.now();
  await createInstallPlan(client, { name: 'install-v1beta1', namespace: 'ns1', bundles: [bundle] });
  let retryingAfterMs: number | undefined;
  let status: { phase?: string; message?: string } | undefined;
  const deadline = started + (windowMs ?? 60_000) + 60_000;
  for (;;) {
    const plan = await client.get({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      namespace: 'ns1',
      name: 'install-v1beta1',
    });
    status = plan?.['status'] as typeof status;
    if (retryingAfterMs === undefined && status?.message?.startsWith('retrying') === true)
      retryingAfterMs = Math.round(performance.now() - started);
    if (status?.phase === 'Failed' || performance.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const failedAfterMs = status?.phase === 'Failed' ? Math.round(performance.now() - started) : null;
  const letters = await listDeadLetters(system.backbone);
  process.stdout.write(
    `${JSON.stringify({
      windowMs: windowMs ?? 60_000,
      retryingAfterMs: retryingAfterMs ?? null,
      failedAfterMs,
      phase: status?.phase,
      message: status?.message,
      deadLetters: letters.length,
    })}\n`,
  );
} finally {
  await system.stop();
}
