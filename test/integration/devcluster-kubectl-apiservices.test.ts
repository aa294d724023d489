// Regression: `kubectl get apiservices` had no AVAILABLE column. kube-aggregator's Table has
// NAME, SERVICE, AVAILABLE, AGE; AVAILABLE is the Available condition's status, with the reason
// in parentheses when it is not True.
import t from 'tap';
import {
  kubectl,
  kubectlMissing,
  rawRequest,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

const local = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.local.example.io
spec:
  group: local.example.io
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 15
`;

const aggregated = `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.remote.example.io
spec:
  group: remote.example.io
  version: v1
  service:
    name: remote
    namespace: remote-system
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 1000
  versionPriority: 15
`;

async function run(fixture: ClusterFixture, args: string[], input?: string): Promise<string> {
  const result = await kubectl(fixture, args, input);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** The SERVICE and AVAILABLE cells of one APIService in `kubectl get apiservices`. */
async function row(fixture: ClusterFixture, name: string): Promise<string[] | undefined> {
  const out = await run(fixture, ['get', 'apiservices', '--no-headers']);
  const line = out.split('\n').find((l) => l.startsWith(`${name} `));
  return line?.trim().split(/\s{2,}/);
}

const missing = kubectlMissing();
if (missing !== undefined) t.fail(missing);
else {
  void t.test(
    'devcluster kubectl - get apiservices shows SERVICE and AVAILABLE, local and aggregated',
    async (t) => {
      const fixture = await startCluster();
      t.teardown(() => fixture.close());
      await run(fixture, ['apply', '-f', '-'], local);
      await run(fixture, ['apply', '-f', '-'], aggregated);

      const header = (await run(fixture, ['get', 'apiservices'])).split('\n')[0] ?? '';
      t.same(header.trim().split(/\s+/), ['NAME', 'SERVICE', 'AVAILABLE', 'AGE']);

      const localRow = await waitFor('the local APIService to be Available', async () => {
        const cells = await row(fixture, 'v1.local.example.io');
        return cells?.[2] === 'True' ? cells : undefined;
      });
      t.same(localRow.slice(0, 3), ['v1.local.example.io', 'Local', 'True']);

      // Not True: the status with the reason, as kube-aggregator prints it.
      const serviceMissing = await waitFor('the aggregated APIService to miss its Service', () =>
        row(fixture, 'v1.remote.example.io').then((cells) =>
          cells?.[2] === 'False (ServiceNotFound)' ? cells : undefined,
        ),
      );
      t.same(serviceMissing.slice(0, 3), [
        'v1.remote.example.io',
        'remote-system/remote',
        'False (ServiceNotFound)',
      ]);

      await run(fixture, ['create', 'namespace', 'remote-system']);
      await run(fixture, [
        'create',
        'service',
        'clusterip',
        'remote',
        '--tcp=443:8443',
        '-n',
        'remote-system',
      ]);
      const endpointsMissing = await waitFor('the aggregated APIService to miss Endpoints', () =>
        row(fixture, 'v1.remote.example.io').then((cells) =>
          cells?.[2] === 'False (MissingEndpoints)' ? cells : undefined,
        ),
      );
      t.same(endpointsMissing.slice(1, 3), ['remote-system/remote', 'False (MissingEndpoints)']);

      // The Table itself, as kube-aggregator defines its columns.
      const table = await rawRequest(
        fixture,
        'GET',
        '/apis/apiregistration.k8s.io/v1/apiservices/v1.local.example.io',
        undefined,
        { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      );
      const body = JSON.parse(table.body) as {
        columnDefinitions: { name: string; type: string; description: string }[];
        rows: { cells: unknown[] }[];
      };
      t.same(
        body.columnDefinitions.map((c) => c.name),
        ['Name', 'Service', 'Available', 'Age'],
      );
      t.match(body.columnDefinitions[2], {
        type: 'string',
        description: 'Whether this service is available.',
      });
      t.same(body.rows[0]?.cells.slice(0, 3), ['v1.local.example.io', 'Local', 'True']);
    },
  );
}
