// `olmq dlq list|show|redrive`, the real CLI against a real nats-server: bad arguments exit 2
// naming them; letters print as a kubectl-style table, a description or JSON, filtered by
// function, cluster and key; a redrive gives dead work another go, and the letter is gone.
import { connect } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { openBackbone, type Backbone } from '../../shared/bus/backbone.js';
import { listDeadLetters, publishDeadLetter } from '../../shared/bus/dead-letters.js';
import { objectKey } from '../../shared/bus/subjects.js';
import { FunctionHost, type FunctionDefinition } from '../../shared/runtime/function-host.js';
import { createFunctionMetrics } from '../../shared/runtime/metrics.js';
import { workKeyType, type NamespacedName } from '../../shared/runtime/work-keys.js';
import { runOlmq } from '../harness/cli.js';
import { capturingLogger } from '../harness/log.js';
import { natsServerFor } from '../harness/nats.js';
import { waitFor } from '../harness/wait.js';

async function backboneFor(t: Test): Promise<{ backbone: Backbone; url: string }> {
  const server = await natsServerFor(t);
  const nc = await connect({ servers: server.url });
  t.teardown(() => nc.close());
  return { backbone: await openBackbone(nc), url: server.url };
}

const at = new Date(Date.now() - 5 * 60_000).toISOString();

t.test('olmq dlq - bad arguments exit 2 naming the argument', async (t) => {
  const cases: [string[], RegExp][] = [
    [['dlq', 'show', 'abc'], /<id>: "abc" is not a dead letter ID/],
    [['dlq', 'show'], /takes <id>/],
    [['dlq', 'redrive'], /say which dead letters to redrive/],
    [['dlq', 'redrive', '3', '--all'], /give one of/],
    [['dlq', 'redrive', '--all', '--function', 'x'], /give one of/],
    [['dlq', 'list', '--key', 'ns1//x'], /--key: "ns1\/\/x" has an empty word/],
    [['dlq', 'list', '--nats-url', 'notaurl'], /--nats-url: .*must be a URL/],
    [['dlq', 'list', '-o', 'yaml'], /--output: .*must be one of: table, json/],
    [['dlq', 'purge'], /missing or unknown subcommand/],
  ];
  for (const [args, message] of cases) {
    const outcome = await runOlmq(args);
    t.equal(outcome.code, 2, `olmq ${args.join(' ')} exits 2`);
    t.match(outcome.stderr, message);
  }
});

t.test('olmq dlq - list as a table and JSON, filtered; show one; unknown ID exits 1', async (t) => {
  const { backbone, url } = await backboneFor(t);
  const nats = ['--nats-url', url];
  const empty = await runOlmq(['dlq', 'list', ...nats]);
  t.equal(empty.code, 0);
  t.equal(empty.stdout, '');
  t.match(empty.stderr, 'No dead letters found.');

  await publishDeadLetter(backbone, {
    function: 'install-plan',
    cluster: 'c1',
    key: ['ns1', 'install-abc'],
    reason: 'Permanent',
    failures: 1,
    error: 'the server could not find the requested resource',
    at,
  });
  await publishDeadLetter(backbone, {
    function: 'resolve',
    cluster: 'c2',
    origin: 'trigger',
    key: ['Subscription', 'ns2', 'etcd'],
    reason: 'TriggerFailed',
    failures: 10,
    error: 'boom',
    at,
    redrives: 2,
  });

  const table = await runOlmq(['dlq', 'list', ...nats]);
  t.equal(table.code, 0, table.stderr);
  const [header, ...rows] = table.stdout.trimEnd().split('\n');
  t.match(
    header,
    /^ID\s+FUNCTION\s+CLUSTER\s+ORIGIN\s+KEY\s+REASON\s+FAILURES\s+REDRIVES\s+AGE\s+ERROR$/,
  );
  t.equal(rows.length, 2);
  t.match(
    rows[0],
    /^1\s+install-plan\s+c1\s+work\s+ns1\/install-abc\s+Permanent\s+1\s+0\s+5m\s+the server could not/,
  );
  t.match(
    rows[1],
    /^2\s+resolve\s+c2\s+trigger\s+Subscription\/ns2\/etcd\s+TriggerFailed\s+10\s+2\s+5m\s+boom$/,
  );

  const json = await runOlmq(['dlq', 'list', ...nats, '-o', 'json']);
  t.match(JSON.parse(json.stdout), [
    { id: 1, function: 'install-plan', key: ['ns1', 'install-abc'], origin: 'work' },
    { id: 2, function: 'resolve', origin: 'trigger', redrives: 2 },
  ]);
  const byFunction = await runOlmq(['dlq', 'list', ...nats, '-o', 'json', '--function', 'resolve']);
  t.match(JSON.parse(byFunction.stdout), [{ id: 2 }]);
  t.equal((JSON.parse(byFunction.stdout) as unknown[]).length, 1);
  const byCluster = await runOlmq(['dlq', 'list', ...nats, '-o', 'json', '--cluster', 'c1']);
  t.match(JSON.parse(byCluster.stdout), [{ id: 1 }]);
  const byKey = await runOlmq(['dlq', 'list', ...nats, '-o', 'json', '--key', 'ns1/install-abc']);
  t.match(JSON.parse(byKey.stdout), [{ id: 1 }]);
  const noKey = await runOlmq(['dlq', 'list', ...nats, '-o', 'json', '--key', 'ns1/other']);
  t.same(JSON.parse(noKey.stdout), []);

  const shown = await runOlmq(['dlq', 'show', '1', ...nats]);
  t.equal(shown.code, 0);
  t.match(shown.stdout, /^ID:\s+1$/m);
  t.match(shown.stdout, /^Function:\s+install-plan$/m);
  t.match(shown.stdout, /^Error:\s+the server could not find the requested resource$/m);
  const missing = await runOlmq(['dlq', 'show', '99', ...nats]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, 'no dead letter 99');
});

t.test('olmq dlq - redrive gives dead work another go; the letter is then gone', async (t) => {
  const { backbone, url } = await backboneFor(t);
  const key = workKeyType('gadgets', ['namespace', 'name']);
  let fixed = false;
  const applied: string[] = [];
  const definition: FunctionDefinition<NamespacedName, NamespacedName, NamespacedName> = {
    key,
    triggers: [
      {
        kind: 'Gadget',
        workKeys: (c) => [key.of({ namespace: c.ref.namespace, name: c.ref.name })],
      },
    ],
    load: (work) => Promise.resolve(work.key),
    decide: (k) => ({ writes: k }),
    apply: (k) => {
      if (!fixed) return Promise.reject(Object.assign(new Error('not yet'), { retryable: false }));
      applied.push(`${k.namespace}/${k.name}`);
      return Promise.resolve();
    },
  };
  const { log } = capturingLogger();
  const host = new FunctionHost(backbone, definition, log, createFunctionMetrics(new Registry()), {
    baseBackoffMs: 10,
    random: () => 0.5,
  });
  await host.start();
  t.teardown(() => host.stop(1_000));
  for (const name of ['g1', 'g2'])
    await backbone.objects.put(
      objectKey({ cluster: 'c1', kind: 'Gadget', namespace: 'ns1', name }),
      JSON.stringify({}),
    );
  await waitFor('two dead letters', async () => (await listDeadLetters(backbone)).length === 2);

  fixed = true; // e.g. the cluster now serves the API the work needed
  const byKey = await runOlmq(['dlq', 'redrive', '--key', 'ns1/g1', '--nats-url', url]);
  t.equal(byKey.code, 0, byKey.stderr);
  t.match(byKey.stdout, /dead letter \d+ \(gadgets ns1\/g1\) redriven/);
  await waitFor('g1 to be reconciled', () => applied.includes('ns1/g1'));
  const left = await runOlmq(['dlq', 'list', '--nats-url', url, '-o', 'json']);
  t.match(JSON.parse(left.stdout), [{ key: ['ns1', 'g2'] }], 'only g2 left');

  const all = await runOlmq(['dlq', 'redrive', '--all', '--nats-url', url, '-o', 'json']);
  t.match(JSON.parse(all.stdout), [{ key: ['ns1', 'g2'] }]);
  await waitFor('g2 to be reconciled', () => applied.includes('ns1/g2'));
  const none = await runOlmq(['dlq', 'list', '--nats-url', url, '-o', 'json']);
  t.same(JSON.parse(none.stdout), [], 'no dead letters left');
});
