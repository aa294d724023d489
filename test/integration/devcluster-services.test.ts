// Services in the devcluster as kube-apiserver 1.30's service storage treats them: the IP family
// fields (single-stack IPv4 by default, dual-stack when configured) and node ports allocated from
// 30000-32767, kept across PUT, patch and apply, refused when taken, released on delete or type
// change.
import t from 'tap';
import {
  kubectl,
  kubectlMissing,
  rawRequest,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';

let fixture: ClusterFixture;
t.before(async () => {
  fixture = await startCluster();
});
t.teardown(async () => {
  await fixture.close();
});

const base = '/api/v1/namespaces/default/services';

interface ServiceBody {
  metadata: { name: string; resourceVersion?: string };
  spec: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: string[];
    ipFamilyPolicy?: string;
    selector?: Record<string, string>;
    ports?: { name?: string; port: number; nodePort?: number; protocol?: string }[];
  };
}

function service(name: string, spec: Partial<ServiceBody['spec']> = {}): ServiceBody {
  return { metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec } };
}

interface Answer {
  status: number;
  body: ServiceBody & { message?: string };
}

async function send(
  on: ClusterFixture,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Answer> {
  const answer = await rawRequest(
    on,
    method,
    path,
    body === undefined ? undefined : JSON.stringify(body),
    { 'Content-Type': contentType },
  );
  return { status: answer.status, body: JSON.parse(answer.body) as Answer['body'] };
}

const create = (body: ServiceBody, on = fixture): Promise<Answer> => send(on, 'POST', base, body);

void t.test('services - a ClusterIP Service gets single-stack IPv4 fields', async (t) => {
  const { status, body } = await create(service('plain'));
  t.equal(status, 201);
  t.match(body.spec.clusterIP, /^10\.96\.\d+\.\d+$/);
  t.same(body.spec.clusterIPs, [body.spec.clusterIP]);
  t.same(body.spec.ipFamilies, ['IPv4']);
  t.equal(body.spec.ipFamilyPolicy, 'SingleStack');
  const prefer = await create(service('prefer', { ipFamilyPolicy: 'PreferDualStack' }));
  t.equal(prefer.status, 201);
  t.same(prefer.body.spec.ipFamilies, ['IPv4'], 'PreferDualStack falls back to one family');
  t.equal(prefer.body.spec.clusterIPs?.length, 1);
});

void t.test('services - RequireDualStack is refused on a single-stack cluster', async (t) => {
  const { status, body } = await create(service('dual', { ipFamilyPolicy: 'RequireDualStack' }));
  t.equal(status, 422);
  t.equal(
    body.message,
    'Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
  );
  const v6 = await create(service('v6', { ipFamilies: ['IPv6'] }));
  t.equal(v6.status, 422);
  t.equal(
    v6.body.message,
    'Service "v6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
  );
  const mismatch = await create(
    service('mismatch', { clusterIP: '10.96.7.7', clusterIPs: ['10.96.7.8'] }),
  );
  t.equal(
    mismatch.body.message,
    'Service "mismatch" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.7.8"}: first value must match `clusterIP`',
  );
});

void t.test(
  'services - a headless Service without selector defaults to dual families',
  async (t) => {
    const body = service('headless', { clusterIP: 'None' });
    delete body.spec.selector;
    const created = await create(body);
    t.equal(created.status, 201);
    t.same(created.body.spec.clusterIPs, ['None']);
    t.equal(created.body.spec.ipFamilyPolicy, 'RequireDualStack');
    t.same(created.body.spec.ipFamilies, ['IPv4', 'IPv6']);
  },
);

void t.test('services - a dual-stack cluster gives RequireDualStack two cluster IPs', async (t) => {
  const dual = await startCluster({ serviceIPFamilies: ['IPv4', 'IPv6'] });
  try {
    const both = await create(service('both', { ipFamilyPolicy: 'RequireDualStack' }), dual);
    t.equal(both.status, 201);
    t.same(both.body.spec.ipFamilies, ['IPv4', 'IPv6']);
    t.match(both.body.spec.clusterIPs, [/^10\.96\./, /^fd00:10:96::/]);
    const single = await create(service('single'), dual);
    t.same(single.body.spec.ipFamilies, ['IPv4']);
    const v6 = await create(service('v6', { ipFamilies: ['IPv6'] }), dual);
    t.match(v6.body.spec.clusterIP, /^fd00:10:96::/);
    t.equal(v6.body.spec.ipFamilyPolicy, 'SingleStack');
  } finally {
    await dual.close();
  }
});

void t.test('services - node ports are allocated and kept across PUT and patch', async (t) => {
  const created = await create(
    service('np', {
      type: 'NodePort',
      ports: [
        { name: 'http', port: 80 },
        { name: 'https', port: 443 },
      ],
    }),
  );
  t.equal(created.status, 201);
  const allocated = created.body.spec.ports?.map((p) => p.nodePort) ?? [];
  t.equal(allocated.length, 2);
  for (const port of allocated) t.ok(port !== undefined && port >= 30000 && port <= 32767);
  t.not(allocated[0], allocated[1]);

  // A PUT of the manifest (no nodePort, no clusterIP) keeps what was allocated.
  const manifest = service('np', {
    type: 'NodePort',
    ports: [
      { name: 'https', port: 443 },
      { name: 'http', port: 8080 },
    ],
  });
  const put = await send(fixture, 'PUT', `${base}/np`, manifest);
  t.equal(put.status, 200);
  t.same(
    put.body.spec.ports?.map((p) => [p.name, p.nodePort]),
    [
      ['https', allocated[1]],
      ['http', allocated[0]],
    ],
    'node ports follow the port names',
  );
  t.equal(put.body.spec.clusterIP, created.body.spec.clusterIP);

  const merge = await send(
    fixture,
    'PATCH',
    `${base}/np`,
    { spec: { ports: [{ name: 'http', port: 80 }] } },
    'application/merge-patch+json',
  );
  t.equal(merge.status, 200);
  t.same(merge.body.spec.ports?.[0]?.nodePort, allocated[0]);
});

void t.test('services - kubectl apply of a NodePort manifest keeps its node port', async (t) => {
  const missing = kubectlMissing();
  if (missing !== undefined) {
    t.fail(`${missing}; install kubectl`);
    return;
  }
  const manifest = (port: number): string =>
    `apiVersion: v1\nkind: Service\nmetadata:\n  name: applied\n  namespace: default\nspec:\n  type: NodePort\n  selector:\n    app: applied\n  ports:\n  - name: web\n    port: ${port}\n`;
  const first = await kubectl(fixture, ['apply', '-f', '-'], manifest(80));
  t.equal(first.code, 0, first.stderr);
  const before = await send(fixture, 'GET', `${base}/applied`);
  const nodePort = before.body.spec.ports?.[0]?.nodePort;
  t.ok(nodePort, 'allocated');
  const second = await kubectl(fixture, ['apply', '-f', '-'], manifest(81));
  t.equal(second.code, 0, second.stderr);
  const after = await send(fixture, 'GET', `${base}/applied`);
  t.same(
    after.body.spec.ports?.map((p) => [p.port, p.nodePort]),
    [[81, nodePort]],
  );
});

void t.test('services - a node port in use is refused until released', async (t) => {
  const first = await create(
    service('holder', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
  );
  t.equal(first.status, 201);
  t.equal(first.body.spec.ports?.[0]?.nodePort, 30080);
  const clash = service('clash', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] });
  const refused = await create(clash);
  t.equal(refused.status, 422);
  t.equal(
    refused.body.message,
    'Service "clash" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
  );
  const outside = await create(
    service('outside', { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] }),
  );
  t.equal(
    outside.body.message,
    'Service "outside" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
  );

  // A type change to ClusterIP drops the node port (sent back unchanged) and frees it.
  const changed = await send(
    fixture,
    'PATCH',
    `${base}/holder`,
    { spec: { type: 'ClusterIP' } },
    'application/merge-patch+json',
  );
  t.equal(changed.status, 200);
  t.equal(changed.body.spec.ports?.[0]?.nodePort, undefined);
  const taken = await create(clash);
  t.equal(taken.status, 201, 'the port is free again');

  // Deleting the Service frees it too.
  t.equal((await send(fixture, 'DELETE', `${base}/clash`)).status, 200);
  const again = await create(
    service('again', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
  );
  t.equal(again.status, 201);
});
