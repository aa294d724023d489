// kubectl auth and events workflows, with every kubectl on the image: auth can-i (admin, a
// ServiceAccount before and after a RoleBinding, --list), auth whoami (SelfSubjectReview),
// create token (TokenRequest) whose token then authenticates as RBAC allows, and events.
// Regressions: `auth whoami` failed ("the selfsubjectreviews API is not enabled") because
// authentication.k8s.io/v1 SelfSubjectReview was not served; `create token --duration=1m` was
// accepted although kube-apiserver refuses durations under 10 minutes.
import t from 'tap';
import type { ClusterFixture } from '../harness/devcluster.js';
import { kubectl } from '../harness/devcluster.js';
import { forEachKubectl, run, runJson } from '../harness/kubectl-workflows.js';
import { waitFor } from '../harness/wait.js';

const robot = 'system:serviceaccount:default:robot';

/** The claims of a JWT (its middle part). */
function claims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

interface SelfSubjectReview {
  kind: string;
  apiVersion: string;
  status: {
    userInfo: {
      username: string;
      uid?: string;
      groups: string[];
      extra?: Record<string, string[]>;
    };
  };
}

async function canI(fixture: ClusterFixture, args: string[]): Promise<[number, string]> {
  const result = await kubectl(fixture, ['auth', 'can-i', ...args]);
  return [result.code, result.stdout.trim()];
}

const warningEvent = `apiVersion: v1
kind: Event
metadata: {name: robot.warning, namespace: default}
involvedObject: {apiVersion: v1, kind: ServiceAccount, name: robot, namespace: default}
reason: TokenTrouble
message: the robot's token looks odd
type: Warning
source: {component: workflow-test}
count: 1
`;

forEachKubectl(
  t,
  (minor) => `devcluster kubectl 1.${minor} - auth, tokens and events`,
  async (t, fixture, minor) => {
    await run(fixture, ['create', 'serviceaccount', 'robot']);

    await t.test('auth can-i answers as RBAC says, before and after a RoleBinding', async (t) => {
      t.same(await canI(fixture, ['create', 'deployments']), [0, 'yes'], 'the admin may');
      t.same(await canI(fixture, ['list', 'pods', `--as=${robot}`]), [1, 'no']);
      await run(fixture, ['create', 'role', 'pod-reader', '--verb=get,list', '--resource=pods']);
      await run(fixture, [
        'create',
        'rolebinding',
        'robot-reads-pods',
        '--role=pod-reader',
        '--serviceaccount=default:robot',
      ]);
      t.same(await canI(fixture, ['list', 'pods', `--as=${robot}`]), [0, 'yes']);
      t.same(await canI(fixture, ['delete', 'pods', `--as=${robot}`]), [1, 'no']);
      t.same(await canI(fixture, ['list', 'pods', '-n', 'kube-system', `--as=${robot}`]), [
        1,
        'no',
      ]);
      const list = await run(fixture, ['auth', 'can-i', '--list', `--as=${robot}`]);
      t.match(list, /^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs\n/);
      t.match(list, /\npods\s+\[\]\s+\[\]\s+\[get list\]\n/);
      t.match(list, /\nselfsubjectreviews\.authentication\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]\n/);
      t.notMatch(list, /configmaps/);
    });

    await t.test('auth whoami shows the user (SelfSubjectReview v1)', async (t) => {
      const result = await kubectl(fixture, ['auth', 'whoami']);
      if (minor < 28) {
        // kubectl 1.27 asks only for v1beta1/v1alpha1, which kube 1.30 does not serve.
        t.not(result.code, 0);
        t.match(result.stderr, /the selfsubjectreviews API is not enabled in the cluster/);
        return;
      }
      t.equal(result.code, 0, result.stderr);
      t.match(
        result.stdout,
        /^ATTRIBUTE\s+VALUE\nUsername\s+admin\nGroups\s+\[system:masters system:authenticated\]\n$/,
      );
      const review = await runJson<SelfSubjectReview>(fixture, ['auth', 'whoami', `--as=${robot}`]);
      t.equal(review.apiVersion, 'authentication.k8s.io/v1');
      t.equal(review.kind, 'SelfSubjectReview');
      t.same(review.status.userInfo, {
        username: robot,
        groups: [
          'system:serviceaccounts',
          'system:serviceaccounts:default',
          'system:authenticated',
        ],
      });
    });

    await t.test(
      'create token issues a token that authenticates as the ServiceAccount',
      async (t) => {
        const token = (await run(fixture, ['create', 'token', 'robot', '--duration=15m'])).trim();
        const payload = claims(token);
        t.equal(payload['sub'], robot);
        t.equal(
          Number(payload['exp']) - Number(payload['iat']),
          900,
          '--duration sets the lifetime',
        );
        await run(fixture, ['config', 'set-credentials', 'robot', `--token=${token}`]);
        // A user entry with the token alone: with the admin's client certificate also sent, kube
        // authenticates the certificate first.
        const pods = await kubectl(fixture, ['--user=robot', 'get', 'pods']);
        t.equal(pods.code, 0, pods.stderr);
        const configMaps = await kubectl(fixture, ['--user=robot', 'get', 'configmaps']);
        t.equal(configMaps.code, 1);
        t.match(
          configMaps.stderr,
          `Error from server (Forbidden): configmaps is forbidden: User "${robot}" cannot list resource "configmaps" in API group "" in the namespace "default"`,
        );
        if (minor >= 28) {
          const review = await runJson<SelfSubjectReview>(fixture, [
            '--user=robot',
            'auth',
            'whoami',
          ]);
          t.equal(review.status.userInfo.username, robot);
          t.ok(review.status.userInfo.uid, 'the ServiceAccount uid');
          t.same(review.status.userInfo.extra, {
            'authentication.kubernetes.io/credential-id': [`JTI=${String(payload['jti'])}`],
          });
        }
      },
    );

    await t.test(
      'create token refuses a duration under 10 minutes and a missing account',
      async (t) => {
        const short = await kubectl(fixture, ['create', 'token', 'robot', '--duration=1m']);
        t.equal(short.code, 1);
        t.match(
          short.stderr,
          'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
        );
        const missing = await kubectl(fixture, ['create', 'token', 'nobody']);
        t.equal(missing.code, 1);
        t.match(
          missing.stderr,
          'error: failed to create token: serviceaccounts "nobody" not found',
        );
      },
    );

    await t.test('events and get events show controller and test events', async (t) => {
      await run(fixture, ['create', 'deployment', 'evented', '--image=nginx']);
      const forDeployment = await waitFor('the deployment controller event', async () => {
        const out = await run(fixture, ['events', '--for=deployment/evented']);
        return /ScalingReplicaSet/.test(out) ? out : undefined;
      });
      t.match(forDeployment, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
      t.match(
        forDeployment,
        /Normal\s+ScalingReplicaSet\s+Deployment\/evented\s+Scaled up replica set evented-\w+ to 1/,
      );
      t.notMatch(forDeployment, /ReplicaSet\/evented-/, '--for keeps only the Deployment');
      await run(fixture, ['create', '-f', '-'], warningEvent);
      const warnings = await run(fixture, ['events', '--types=Warning']);
      t.match(
        warnings,
        /Warning\s+TokenTrouble\s+ServiceAccount\/robot\s+the robot's token looks odd/,
      );
      t.notMatch(warnings, /Normal/, 'only warnings');
      const listed = await run(fixture, ['get', 'events']);
      t.match(listed, /^NAME\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
      t.match(listed, /\nrobot\.warning\s+\S+\s+Warning\s+TokenTrouble\s+serviceaccount\/robot\s+/);
      t.match(
        listed,
        /Normal\s+SuccessfulCreate\s+replicaset\/evented-\w+\s+Created pod: evented-/,
      );
    });
  },
);
