// kube-apiserver 1.30's validation of built-in kinds in the devcluster: each rule group refused
// with kube's 422 Status (field paths, cause types, messages), on create and on update (PUT,
// merge patch, server-side apply, kubectl apply).
import t from 'tap';
import { certificateMounts, withCertificate } from '../../functions/install/csv/webhooks.js';
import {
  kubectl,
  kubectlMissing,
  rawRequest,
  startCluster,
  type ClusterFixture,
  type RawResponse,
} from '../harness/devcluster.js';

let fixture: ClusterFixture;
t.before(async () => {
  fixture = await startCluster();
});
t.teardown(async () => {
  await fixture.close();
});

interface Cause {
  type?: string;
  field?: string;
  message: string;
}

interface Status {
  reason: string;
  code: number;
  message: string;
  details?: { name?: string; group?: string; kind?: string; causes?: Cause[] };
}

function statusOf(response: RawResponse): Status {
  return JSON.parse(response.body) as Status;
}

/** `field: message` of each cause, the form kube's aggregate message and kubectl print. */
function causeLines(response: RawResponse): string[] {
  return (statusOf(response).details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
}

function post(path: string, body: unknown): Promise<RawResponse> {
  return rawRequest(fixture, 'POST', path, JSON.stringify(body));
}

const deployments = '/apis/apps/v1/namespaces/default/deployments';

function deployment(name: string, mountPaths: readonly string[]): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          volumes: [
            { name: 'certs', secret: { secretName: 'certs' } },
            { name: 'tmp', emptyDir: {} },
          ],
          containers: [
            {
              name: 'main',
              image: 'example.com/web:1',
              volumeMounts: mountPaths.map((mountPath, i) => ({
                name: i === 0 ? 'certs' : 'tmp',
                mountPath,
              })),
            },
          ],
        },
      },
    },
  };
}

const duplicateMount =
  'spec.template.spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/x": must be unique';

void t.test(
  'validation - a Deployment mounting two volumes at one path is refused (POST)',
  async (t) => {
    const res = await post(deployments, deployment('dup', ['/x', '/x']));
    t.equal(res.status, 422);
    const status = statusOf(res);
    t.equal(status.reason, 'Invalid');
    t.equal(status.message, `Deployment.apps "dup" is invalid: ${duplicateMount}`);
    t.same(status.details, {
      name: 'dup',
      group: 'apps',
      kind: 'Deployment',
      causes: [
        {
          type: 'FieldValueInvalid',
          field: 'spec.template.spec.containers[0].volumeMounts[1].mountPath',
          message: 'Invalid value: "/x": must be unique',
        },
      ],
    });
  },
);

void t.test('validation - kubectl apply prints the duplicate mountPath as kube does', async (t) => {
  const missing = kubectlMissing();
  if (missing !== undefined) {
    t.fail(missing);
    return;
  }
  const manifest = JSON.stringify(deployment('applied', ['/x', '/x']));
  const created = await kubectl(fixture, ['apply', '-f', '-'], manifest);
  t.not(created.code, 0);
  t.match(created.stderr, `The Deployment "applied" is invalid: ${duplicateMount}`);
  // An existing Deployment replaced by one mounting twice at one path is refused as well. (Not
  // through `kubectl apply`: its strategic merge patch merges volumeMounts by mountPath.)
  const valid = await kubectl(
    fixture,
    ['apply', '-f', '-'],
    JSON.stringify(deployment('applied', ['/x', '/y'])),
  );
  t.equal(valid.code, 0, valid.stderr);
  const updated = await kubectl(fixture, ['replace', '-f', '-'], manifest);
  t.not(updated.code, 0);
  t.match(updated.stderr, `The Deployment "applied" is invalid: ${duplicateMount}`);
  const stored = await kubectl(fixture, ['get', 'deployment', 'applied', '-o', 'json']);
  const mounts = (
    JSON.parse(stored.stdout) as {
      spec: { template: { spec: { containers: { volumeMounts: { mountPath: string }[] }[] } } };
    }
  ).spec.template.spec.containers[0]?.volumeMounts.map((m) => m.mountPath);
  t.same(mounts, ['/x', '/y'], 'the stored Deployment is unchanged');
});

void t.test(
  'validation - updates of an existing Deployment are validated (PUT, merge patch, apply)',
  async (t) => {
    const created = await post(deployments, deployment('upd', ['/x', '/y']));
    t.equal(created.status, 201, created.body);
    const stored = JSON.parse(created.body) as {
      metadata: { resourceVersion?: string };
      spec: { template: { spec: { containers: { volumeMounts: { mountPath: string }[] }[] } } };
    };
    const container = stored.spec.template.spec.containers[0];
    if (container?.volumeMounts[1] !== undefined) container.volumeMounts[1].mountPath = '/x';
    // No resourceVersion: the deployment controller writes the status meanwhile.
    delete stored.metadata.resourceVersion;
    const put = await rawRequest(fixture, 'PUT', `${deployments}/upd`, JSON.stringify(stored));
    t.equal(put.status, 422);
    t.same(causeLines(put), [duplicateMount]);
    const patch = await rawRequest(
      fixture,
      'PATCH',
      `${deployments}/upd`,
      JSON.stringify({
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'main',
                  image: 'example.com/web:1',
                  volumeMounts: [
                    { name: 'certs', mountPath: '/x' },
                    { name: 'tmp', mountPath: '/x' },
                  ],
                },
              ],
            },
          },
        },
      }),
      { 'Content-Type': 'application/merge-patch+json' },
    );
    t.equal(patch.status, 422);
    t.same(causeLines(patch), [duplicateMount]);
    const applied = deployment('upd', ['/x', '/y']) as {
      spec: { template: { spec: Record<string, unknown> } };
    };
    applied.spec.template.spec['restartPolicy'] = 'Never';
    const apply = await rawRequest(
      fixture,
      'PATCH',
      `${deployments}/upd?fieldManager=test&force=true`,
      JSON.stringify(applied),
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    t.equal(apply.status, 422);
    t.same(causeLines(apply), [
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
    const selector = await rawRequest(
      fixture,
      'PATCH',
      `${deployments}/upd`,
      JSON.stringify({
        spec: {
          selector: { matchLabels: { app: 'other' } },
          template: { metadata: { labels: { app: 'other' } } },
        },
      }),
      { 'Content-Type': 'application/merge-patch+json' },
    );
    t.equal(selector.status, 422);
    t.same(causeLines(selector), [
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"other"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    ]);
  },
);

void t.test(
  'validation - pod specs: containers, volumes, ports, env, resources, probes, policies',
  async (t) => {
    const res = await post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bad-pod' },
      spec: {
        restartPolicy: 'Sometimes',
        serviceAccountName: 'Bad_SA',
        volumes: [
          { name: 'data', emptyDir: {}, secret: { secretName: 's' } },
          { name: 'data', configMap: { name: 'c' } },
          { name: 'none' },
        ],
        initContainers: [{ name: 'main', image: 'busybox' }],
        containers: [
          {
            name: 'main',
            image: 'busybox',
            ports: [
              { name: 'this-name-is-too-long', containerPort: 70000 },
              { containerPort: 80, protocol: 'HTTP' },
            ],
            env: [
              { name: '1BAD' },
              {
                name: 'FROM',
                valueFrom: {
                  secretKeyRef: { name: 's', key: 'k' },
                  configMapKeyRef: { name: 'c', key: 'k' },
                },
              },
            ],
            resources: { limits: { cpu: '500m' }, requests: { cpu: '1' } },
            volumeMounts: [{ name: 'missing', mountPath: '/m' }],
            livenessProbe: { exec: { command: ['true'] }, httpGet: { port: 8080 } },
          },
          { name: 'Main_2' },
        ],
      },
    });
    t.equal(res.status, 422);
    t.same(causeLines(res), [
      'spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type',
      'spec.volumes[1].name: Duplicate value: "data"',
      'spec.volumes[2]: Required value: must specify a volume type',
      'spec.containers[0].ports[0].name: Invalid value: "this-name-is-too-long": must be no more than 15 characters',
      'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      "spec.containers[0].env[0].name: Invalid value: \"1BAD\": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
      'spec.containers[0].env[1].valueFrom: Invalid value: "": may not have more than one field specified at a time',
      'spec.containers[0].volumeMounts[0].name: Not found: "missing"',
      'spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m',
      'spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type',
      "spec.containers[1].name: Invalid value: \"Main_2\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'spec.containers[1].image: Required value',
      'spec.initContainers[0].name: Duplicate value: "main"',
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      "spec.serviceAccountName: Invalid value: \"Bad_SA\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    const types = new Set((statusOf(res).details?.causes ?? []).map((c) => c.type));
    t.same([...types].sort(), [
      'FieldValueDuplicate',
      'FieldValueForbidden',
      'FieldValueInvalid',
      'FieldValueNotFound',
      'FieldValueNotSupported',
      'FieldValueRequired',
    ]);
  },
);

void t.test('validation - a malformed quantity fails decoding (400), as in kube', async (t) => {
  const res = await post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'bad-quantity' },
    spec: {
      containers: [{ name: 'c', image: 'busybox', resources: { limits: { memory: 'lots' } } }],
    },
  });
  t.equal(res.status, 400);
  t.equal(
    statusOf(res).message,
    'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
  );
});

void t.test(
  'validation - pod templates: restart policies of Deployments and CronJob job templates',
  async (t) => {
    const bad = deployment('never', ['/x']) as {
      spec: { template: { spec: Record<string, unknown> } };
    };
    bad.spec.template.spec['restartPolicy'] = 'Never';
    const res = await post(deployments, bad);
    t.equal(res.status, 422);
    t.same(causeLines(res), [
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
    const cron = await post('/apis/batch/v1/namespaces/default/cronjobs', {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: {
        schedule: '0 3 * * *',
        jobTemplate: {
          spec: {
            template: {
              spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'busybox' }] },
            },
          },
        },
      },
    });
    t.equal(cron.status, 422);
    t.same(causeLines(cron), [
      'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    ]);
  },
);

const services = '/api/v1/namespaces/default/services';

void t.test('validation - services: ports, type, node ports', async (t) => {
  const res = await post(services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'bad-svc' },
    spec: {
      type: 'ClusterIP',
      selector: { app: 'x' },
      ports: [
        { port: 80, nodePort: 30080 },
        { name: 'http', port: 80, targetPort: 'no_such' },
        { name: 'high', port: 0 },
      ],
    },
  });
  t.equal(res.status, 422);
  t.same(causeLines(res), [
    'spec.ports[0].name: Required value',
    'spec.ports[1].targetPort: Invalid value: "no_such": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    'spec.ports[2].port: Invalid value: 0: must be between 1 and 65535, inclusive',
    'spec.ports[2].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive',
    "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
  ]);
  const type = await post(services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'bad-type' },
    spec: { type: 'Internal', ports: [{ port: 80 }] },
  });
  t.equal(type.status, 422);
  t.same(causeLines(type), [
    'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
  ]);
});

void t.test('validation - a Service keeps its cluster IP on update', async (t) => {
  const created = await post(services, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
  });
  t.equal(created.status, 201, created.body);
  const patch = await rawRequest(
    fixture,
    'PATCH',
    `${services}/web`,
    JSON.stringify({ spec: { clusterIP: '10.96.200.200', clusterIPs: ['10.96.200.200'] } }),
    { 'Content-Type': 'application/merge-patch+json' },
  );
  t.equal(patch.status, 422);
  t.equal(
    statusOf(patch).message,
    'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.200.200"}: may not change once set',
  );
  const unchanged = await rawRequest(
    fixture,
    'PATCH',
    `${services}/web`,
    JSON.stringify({ metadata: { labels: { tier: 'front' } } }),
    { 'Content-Type': 'application/merge-patch+json' },
  );
  t.equal(unchanged.status, 200, unchanged.body);
});

const rbac = '/apis/rbac.authorization.k8s.io/v1';

void t.test('validation - RBAC rules, role refs and subjects', async (t) => {
  const role = await post(`${rbac}/namespaces/default/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'bad-role' },
    rules: [
      { nonResourceURLs: ['/healthz'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'] },
    ],
  });
  t.equal(role.status, 422);
  t.same(causeLines(role), [
    'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
    'rules[1].verbs: Required value: verbs must contain at least one value',
  ]);
  const binding = await post(`${rbac}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'bad-binding' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
    subjects: [
      { kind: 'ServiceAccount', name: 'sa' },
      { kind: 'Robot', name: 'r2' },
    ],
  });
  t.equal(binding.status, 422);
  t.same(causeLines(binding), [
    'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
    'subjects[0].namespace: Required value',
    'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
  ]);
  const created = await post(`${rbac}/namespaces/default/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'readers' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice' }],
  });
  t.equal(created.status, 201, created.body);
  t.same((JSON.parse(created.body) as { subjects: unknown[] }).subjects, [
    { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
  ]);
  const changed = await rawRequest(
    fixture,
    'PATCH',
    `${rbac}/namespaces/default/rolebindings/readers`,
    JSON.stringify({ roleRef: { name: 'edit' } }),
    { 'Content-Type': 'application/merge-patch+json' },
  );
  t.equal(changed.status, 422);
  t.equal(
    statusOf(changed).message,
    'RoleBinding.rbac.authorization.k8s.io "readers" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
  );
});

void t.test('validation - admission webhook configurations', async (t) => {
  const res = await post('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'bad-hooks' },
    webhooks: [
      {
        name: 'check',
        clientConfig: { url: 'https://example.com/v', service: { name: 's', namespace: 'n' } },
        timeoutSeconds: 31,
        rules: [
          {
            operations: ['PATCH'],
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            resources: ['deployments'],
          },
        ],
      },
      {
        name: 'check.example.com',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        clientConfig: { service: { name: 's', namespace: 'n', path: 'validate' } },
      },
      {
        name: 'check.example.com',
        sideEffects: 'Some',
        admissionReviewVersions: ['v2'],
        clientConfig: { url: 'http://example.com/v' },
      },
      {
        name: 'bare.example.com',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        clientConfig: { url: 'example.com/v' },
      },
    ],
  });
  t.equal(res.status, 422);
  t.same(causeLines(res), [
    'webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots',
    'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
    'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
    'webhooks[0].clientConfig: Required value: exactly one of url or service is required',
    'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
    'webhooks[1].clientConfig.service.path: Invalid value: "validate": must start with a \'/\'',
    'webhooks[2].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
    'webhooks[2].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
    'webhooks[2].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    'webhooks[2].name: Duplicate value: "check.example.com"',
    'webhooks[3].clientConfig.url: Invalid value: "": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
    'webhooks[3].clientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]',
  ]);
});

void t.test('validation - PodDisruptionBudgets and NetworkPolicies', async (t) => {
  const pdb = await post('/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'bad-pdb' },
    spec: {
      minAvailable: '150%',
      maxUnavailable: 1,
      selector: { matchExpressions: [{ key: 'app', operator: 'In' }] },
    },
  });
  t.equal(pdb.status, 422);
  const lines = causeLines(pdb);
  t.match(
    lines[0],
    /^spec: Invalid value: .*: minAvailable and maxUnavailable cannot be both set$/,
  );
  t.same(lines.slice(1), [
    'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
  ]);
  const policy = await post('/apis/networking.k8s.io/v1/namespaces/default/networkpolicies', {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'bad-np' },
    spec: { podSelector: {}, ingress: [{ from: [{}], ports: [{ port: 'web', endPort: 90 }] }] },
  });
  t.equal(policy.status, 422);
  t.same(causeLines(policy), [
    'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric',
    'spec.ingress[0].from[0]: Required value: must specify a peer',
  ]);
});

void t.test('validation - object metadata: label keys and the annotations size', async (t) => {
  const res = await post('/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'big',
      labels: { 'bad key': 'v' },
      annotations: { big: 'x'.repeat(256 * 1024) },
    },
  });
  t.equal(res.status, 422);
  t.same(causeLines(res), [
    "metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    'metadata.annotations: Too long: must have at most 262144 bytes',
  ]);
});

void t.test(
  'validation - regression: the webhook certificate mount replaces a bundle mount at its path',
  async (t) => {
    // A kubebuilder-made bundle mounts its own "cert" volume where the serving certificate goes;
    // olmq added its mount beside it, and kube-apiserver refuses two mounts at one path.
    const bundle = deployment('kubebuilder', []) as {
      spec: { template: { spec: { volumes: unknown[]; containers: Record<string, unknown>[] } } };
    };
    bundle.spec.template.spec.volumes = [
      { name: 'cert', secret: { secretName: 'webhook-server-cert' } },
    ];
    const container = bundle.spec.template.spec.containers[0];
    if (container !== undefined)
      container['volumeMounts'] = [
        { name: 'cert', mountPath: certificateMounts.webhook.path, readOnly: true },
      ];
    const spec = withCertificate(bundle.spec, 'hash', 'kubebuilder-service-cert');
    const res = await post(deployments, { ...bundle, spec });
    t.equal(res.status, 201, res.body);
  },
);
