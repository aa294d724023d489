// `olmq packageserver` as a process: registers itself with the devcluster (--register), serves
// kubectl through aggregation, stops cleanly on SIGTERM; bad configuration exits 2.
import { spawn } from 'node:child_process';
import { connect } from '@nats-io/transport-node';
import t from 'tap';
import { openBackbone } from '../../shared/bus/backbone.js';
import { clusterFor } from '../harness/backbone.js';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import { natsServerFor } from '../harness/nats.js';
import { publishCatalog, smallCatalogs } from '../harness/packageserver.js';
import { runOlmq } from '../harness/cli.js';
import { olmqBin } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';
import type { KubeObject } from '../../shared/kube/client.js';

t.test('packageserver cli - a serving certificate without its key exits 2', async (t) => {
  // An existing file: a missing one is refused earlier, naming it.
  const outcome = await runOlmq(['packageserver', '--tls-cert-file', process.execPath]);
  t.equal(outcome.code, 2);
  t.match(outcome.stderr, /--tls-cert-file and --tls-key-file go together/);
  const absent = await runOlmq(['packageserver', '--tls-cert-file', '/nonexistent/cert.pem']);
  t.equal(absent.code, 2);
  t.match(absent.stderr, /--tls-cert-file: invalid value "\/nonexistent\/cert.pem": no such file/);
});

const missing = kubectlMissing();
if (missing !== undefined) t.fail(missing);
else {
  t.test('packageserver cli - --register serves kubectl through the devcluster', async (t) => {
    const { fixture, client } = await clusterFor(t);
    const nats = await natsServerFor(t);
    const nc = await connect({ servers: nats.url });
    t.teardown(() => nc.close());
    const backbone = await openBackbone(nc);
    await publishCatalog(backbone, 'c1', smallCatalogs, {
      namespace: 'olm',
      name: 'operatorhubio',
      displayName: 'Community Operators',
      publisher: 'OperatorHub.io',
    });
    const child = spawn(
      process.execPath,
      [
        olmqBin,
        'packageserver',
        '--kubeconfig',
        fixture.kubeconfigPath,
        '--cluster',
        'c1',
        '--nats-url',
        nats.url,
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--metrics-port',
        '0',
        '--register',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    // The process registers the APIService itself; the devcluster then checks it.
    await waitFor(
      'the APIService to be Available',
      async () => {
        const apiService = await client.get<
          KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
        >({
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          name: 'v1.packages.operators.coreos.com',
        });
        return apiService?.status?.conditions?.some(
          (c) => c.type === 'Available' && c.status === 'True',
        );
      },
      60_000,
      100,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${stderr}`);
    });
    const list = await kubectl(fixture, ['get', 'packagemanifests', '-n', 'default', '-o', 'name']);
    t.equal(list.code, 0, list.stderr);
    t.equal(list.stdout.trim().split('\n').length, 6);
    child.kill('SIGTERM');
    t.equal(await exited, 0, stderr);
  });
}
