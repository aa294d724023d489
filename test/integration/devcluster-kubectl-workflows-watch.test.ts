// kubectl get -w and explain, with every kubectl on the image: a watch prints the rows (or the
// watch events) of later changes; explain describes CRD fields from the CRD's schema and a
// built-in kind's fields from the OpenAPI v3 document. Regression: `kubectl explain
// deployment.spec.replicas` failed (`field "replicas" does not exist`) because built-in kinds had
// an open schema with no fields.
import t from 'tap';
import type { ClusterFixture } from '../harness/devcluster.js';
import {
  forEachKubectl,
  olmCrd,
  run,
  startKubectl,
  widgetsCrdPath,
  type KubectlStream,
} from '../harness/kubectl-workflows.js';

/** Reads lines until one matches `pattern`; returns it. */
async function lineMatching(stream: KubectlStream, pattern: RegExp): Promise<string> {
  for (;;) {
    const line = await stream.nextLine(`a line matching ${String(pattern)}`);
    if (pattern.test(line)) return line;
  }
}

interface WatchEvent {
  type: string;
  object: { metadata: { name: string }; data?: Record<string, string> };
}

/** Reads watch events (JSON, one or more lines each) until one satisfies `wanted`. */
async function eventMatching(
  stream: KubectlStream,
  wanted: (event: WatchEvent) => boolean,
): Promise<WatchEvent> {
  let text = '';
  for (;;) {
    text += await stream.nextLine('a watch event');
    let event: WatchEvent;
    try {
      event = JSON.parse(text) as WatchEvent;
    } catch {
      continue;
    }
    text = '';
    if (wanted(event)) return event;
  }
}

async function explain(
  fixture: ClusterFixture,
  field: string,
  ...flags: string[]
): Promise<string> {
  return run(fixture, ['explain', field, ...flags]);
}

forEachKubectl(
  t,
  (minor) => `devcluster kubectl 1.${minor} - get -w and explain`,
  async (t, fixture, minor) => {
    await t.test('get -w prints a row for a change made after it started', async (t) => {
      await run(fixture, ['create', 'configmap', 'before']);
      const watch = startKubectl(fixture, ['get', 'configmaps', '-w']);
      t.teardown(() => watch.stop());
      t.match(await watch.nextLine('the header'), /^NAME\s+DATA\s+AGE$/);
      await lineMatching(watch, /^before\s+0\s/);
      await run(fixture, ['create', 'configmap', 'after', '--from-literal=colour=blue']);
      t.match(await lineMatching(watch, /^after\s/), /^after\s+1\s+\d+s$/);
      await run(fixture, ['label', 'configmap', 'before', 'seen=yes']);
      t.match(await lineMatching(watch, /^before\s/), /^before\s+0\s/, 'the update prints a row');
      await watch.stop();
    });

    await t.test('get -w --output-watch-events -o json prints typed events', async (t) => {
      const watch = startKubectl(fixture, [
        'get',
        'configmaps',
        '-w',
        '--output-watch-events',
        '-o',
        'json',
      ]);
      t.teardown(() => watch.stop());
      const listed = await eventMatching(watch, (e) => e.object.metadata.name === 'after');
      t.equal(listed.type, 'ADDED', 'what exists is listed as ADDED');
      t.same(listed.object.data, { colour: 'blue' });
      await run(fixture, [
        'patch',
        'configmap',
        'after',
        '--type=merge',
        '-p',
        '{"data":{"colour":"red"}}',
      ]);
      const modified = await eventMatching(watch, (e) => e.object.metadata.name === 'after');
      t.equal(modified.type, 'MODIFIED');
      t.same(modified.object.data, { colour: 'red' });
      await run(fixture, ['delete', 'configmap', 'after']);
      const deleted = await eventMatching(watch, (e) => e.object.metadata.name === 'after');
      t.equal(deleted.type, 'DELETED');
      await watch.stop();
    });

    await t.test('explain describes CRD fields from the CRD schema', async (t) => {
      await run(fixture, ['apply', '-f', olmCrd('subscriptions'), '-f', widgetsCrdPath]);
      await run(fixture, [
        'wait',
        '--for=condition=Established',
        '--timeout=30s',
        'crd/subscriptions.operators.coreos.com',
        'crd/widgets.example.olmq.io',
      ]);
      const kind = await explain(fixture, 'subscription');
      t.match(kind, /KIND:\s+Subscription\n/);
      t.match(kind, /Subscription keeps operators up to date by tracking changes to Catalogs\./);
      const channel = await explain(fixture, 'subscription.spec.channel');
      t.match(channel, /FIELD: channel <string>/);
      const approval = await explain(fixture, 'subscription.spec.installPlanApproval');
      t.match(approval, /Approval is the user approval policy for an InstallPlan\./);
      const recursive = await explain(fixture, 'subscription.spec', '--recursive');
      t.match(recursive, /\n\s+channel\s+<string>\n/);
      t.match(recursive, /\n\s+name\s+<string> -required-\n/);
      t.match(recursive, /\n\s+config\s+<Object>\n\s+affinity\s+<Object>\n/);
      const size = await explain(fixture, 'widget.spec.size');
      t.match(size, /FIELD: size <string>/);
      // kubectl lists a field's enum from 1.30 on.
      if (minor >= 30) t.match(size, /ENUM:\n\s+small\n\s+medium\n\s+large/);
      t.match(size, /Size of the widget\./);
    });

    await t.test('explain describes a built-in kind field', async (t) => {
      const replicas = await explain(fixture, 'deployment.spec.replicas');
      t.match(replicas, /GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/);
      t.match(replicas, /FIELD: replicas <integer>/);
      t.match(
        replicas,
        /Number of desired pods\. This is a pointer to distinguish between explicit\s+zero/,
      );
      const spec = await explain(fixture, 'deployment.spec', '--recursive');
      t.match(spec, /\n\s+selector\s+<LabelSelector> -required-\n/);
      t.match(
        spec,
        /\n\s+strategy\s+<DeploymentStrategy>\n\s+rollingUpdate\s+<RollingUpdateDeployment>\n/,
      );
      t.match(spec, /\n\s+maxSurge\s+<IntOrString>\n/);
      t.match(
        await explain(fixture, 'deployment.status.conditions.reason'),
        /The reason for the condition's last transition\./,
      );
    });
  },
);
