// `kubectl olmq why`'s verdict from a snapshot of the chain: the first wrong link is the cause,
// links after it are not reached, and a CSV failing its install check names the Deployment.
import t from 'tap';
import { diagnose, type WhySnapshot } from '../../cli/plugin/diagnosis.js';
import type {
  CsvView,
  DeploymentView,
  InstallPlanView,
  SubscriptionView,
} from '../../cli/plugin/types.js';

const meta = (name: string) => ({ name, namespace: 'team' });

function subscription(status: SubscriptionView['status'] = {}): SubscriptionView {
  return {
    metadata: meta('etcd'),
    spec: { name: 'etcd', source: 'community', sourceNamespace: 'olm', channel: 'alpha' },
    status,
  };
}

const readyCatalog = {
  metadata: { name: 'community', namespace: 'olm' },
  spec: { address: '10.0.0.9:50051' },
  status: { connectionState: { lastObservedState: 'READY' } },
};

function plan(phase: string, extra: Partial<InstallPlanView> = {}): InstallPlanView {
  return {
    metadata: meta('install-abc'),
    spec: { clusterServiceVersionNames: ['etcd.v2'], approval: 'Manual', approved: false },
    status: { phase },
    ...extra,
  };
}

function csv(phase: string, reason = ''): CsvView {
  return {
    metadata: meta('etcd.v2'),
    spec: { install: { spec: { deployments: [{ name: 'etcd-operator' }] } } },
    status: { phase, reason },
  };
}

function deployment(available: boolean): DeploymentView {
  return {
    metadata: meta('etcd-operator'),
    spec: { replicas: 1 },
    status: {
      availableReplicas: available ? 1 : 0,
      conditions: [
        {
          type: 'Available',
          status: available ? 'True' : 'False',
          reason: available ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
        },
      ],
    },
  };
}

const base: WhySnapshot = {
  subscription: subscription({
    currentCSV: 'etcd.v2',
    installedCSV: 'etcd.v2',
    installPlanRef: { name: 'install-abc' },
  }),
  catalog: readyCatalog,
  plan: plan('Complete', { spec: { clusterServiceVersionNames: ['etcd.v2'], approved: true } }),
  csv: csv('Succeeded'),
  deployments: [{ name: 'etcd-operator', deployment: deployment(true), pods: [] }],
};

t.test('why diagnosis - a healthy chain is Installed with no cause', (t) => {
  const d = diagnose(base);
  t.equal(d.summary, 'Installed');
  t.equal(d.finding, undefined);
  t.same(
    d.links.map((l) => l.status),
    ['OK', 'OK', 'OK', 'OK', 'OK', 'OK'],
  );
  t.end();
});

t.test('why diagnosis - a missing or unhealthy catalog comes first', (t) => {
  const missing = diagnose({
    ...base,
    subscription: subscription(),
    catalog: undefined,
    plan: undefined,
    csv: undefined,
    deployments: [],
  });
  t.equal(missing.finding?.cause, 'CatalogMissing');
  const unhealthy = diagnose({
    ...base,
    subscription: subscription(),
    catalog: {
      ...readyCatalog,
      status: { connectionState: { lastObservedState: 'TRANSIENT_FAILURE' } },
    },
    plan: undefined,
    csv: undefined,
    deployments: [],
  });
  t.equal(unhealthy.finding?.cause, 'CatalogUnhealthy');
  t.match(unhealthy.finding?.message, /its registry 10\.0\.0\.9:50051 does not answer/);
  t.same(
    unhealthy.links.map((l) => l.status),
    ['OK', 'FAILED', 'NOT REACHED', 'NOT REACHED', 'NOT REACHED'],
  );
  t.end();
});

t.test('why diagnosis - ResolutionFailed is unsatisfiable constraints', (t) => {
  const d = diagnose({
    ...base,
    subscription: subscription({
      conditions: [
        {
          type: 'ResolutionFailed',
          status: 'True',
          reason: 'ConstraintsNotSatisfiable',
          message: 'no operator provides Foo',
        },
      ],
    }),
    plan: undefined,
    csv: undefined,
    deployments: [],
  });
  t.equal(d.finding?.cause, 'ResolutionFailed');
  t.match(d.finding?.message, /no operator provides Foo/);
  t.equal(d.summary, 'Broken');
  t.end();
});

t.test('why diagnosis - a plan waiting for approval says how to approve it', (t) => {
  const d = diagnose({
    ...base,
    subscription: subscription({ currentCSV: 'etcd.v2', installPlanRef: { name: 'install-abc' } }),
    plan: plan('RequiresApproval'),
    csv: undefined,
    deployments: [],
  });
  t.equal(d.finding?.cause, 'ApprovalRequired');
  t.same(d.finding?.fix, [
    'approve with: kubectl olmq upgrade etcd -n team',
    `or: kubectl patch installplan install-abc -n team --type merge -p '{"spec":{"approved":true}}'`,
  ]);
  t.end();
});

t.test('why diagnosis - a failed plan names the failed step', (t) => {
  const d = diagnose({
    ...base,
    subscription: subscription({ currentCSV: 'etcd.v2', installPlanRef: { name: 'install-abc' } }),
    plan: plan('Failed', {
      status: {
        phase: 'Failed',
        plan: [{ status: 'Failed', resource: { kind: 'Service', name: 'bad' } }],
        conditions: [{ type: 'Installed', status: 'False', message: 'Service "bad" is invalid' }],
      },
    }),
    csv: undefined,
    deployments: [],
  });
  t.equal(d.finding?.cause, 'InstallPlanFailed');
  t.equal(
    d.finding?.message,
    'InstallPlan install-abc failed: step Service bad: Service "bad" is invalid',
  );
  t.end();
});

t.test(
  'why diagnosis - a CSV failing while its Deployment is unavailable names the Deployment',
  (t) => {
    const d = diagnose({
      ...base,
      csv: csv('Failed', 'InstallCheckFailed'),
      deployments: [
        {
          name: 'etcd-operator',
          deployment: deployment(false),
          pods: [
            {
              metadata: meta('etcd-operator-x'),
              status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] },
            },
          ],
        },
      ],
    });
    t.equal(d.finding?.cause, 'DeploymentUnavailable');
    t.match(
      d.finding?.message,
      /0\/1 available \(MinimumReplicasUnavailable\); pods: etcd-operator-x Running, not ready/,
    );
    const alone = diagnose({ ...base, csv: csv('Failed', 'InstallComponentFailed') });
    t.equal(alone.finding?.cause, 'CsvFailed');
    t.end();
  },
);

t.test('why diagnosis - a CSV waiting for requirements lists them', (t) => {
  const d = diagnose({
    ...base,
    csv: {
      ...csv('Pending', 'RequirementsNotMet'),
      status: {
        phase: 'Pending',
        reason: 'RequirementsNotMet',
        requirementStatus: [
          { kind: 'CustomResourceDefinition', name: 'x.example.com', status: 'NotPresent' },
        ],
      },
    },
    deployments: [],
  });
  t.equal(d.finding?.cause, 'RequirementsNotMet');
  t.match(d.finding?.message, /CustomResourceDefinition x\.example\.com NotPresent/);
  t.end();
});
