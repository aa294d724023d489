// Dead letters' pure parts: the reason catalogue (public: metrics and `olmq dlq` show it), the
// record's schema and defaults, subjects and filters, and the redrive schedule.
import t from 'tap';
import { deadLetterReasons, deadLetterSchema } from '../../shared/bus/dead-letters.js';
import {
  deadLetterFilter,
  deadLetterSubject,
  triggerDeadLetterSubject,
} from '../../shared/bus/subjects.js';
import { defaultFunctionHostOptions, redriveDelayMs } from '../../shared/runtime/host-options.js';
import { redriveDueAt } from '../../shared/runtime/redrive.js';

t.test('dead letters - the reason catalogue is pinned', (t) => {
  t.same(Object.values(deadLetterReasons).sort(), [
    'Permanent',
    'TooManyFailures',
    'TriggerFailed',
  ]);
  t.end();
});

t.test('dead letters - a letter written without the newer fields reads with defaults', (t) => {
  const letter = deadLetterSchema.parse({
    function: 'install-plan',
    cluster: 'c1',
    key: ['ns1', 'install-abc'],
    failures: 10,
    error: 'the API said no',
    at: '2026-11-26T12:00:00.000Z',
  });
  t.match(letter, { origin: 'work', reason: 'TooManyFailures', redrives: 0 });
  t.notOk(deadLetterSchema.safeParse({ ...letter, reason: 'Whatever' }).success);
  t.notOk(deadLetterSchema.safeParse({ ...letter, cluster: '' }).success);
  t.end();
});

t.test('dead letters - subjects and filters name function, cluster and key', (t) => {
  t.equal(
    deadLetterSubject('install-plan', 'c1', ['ns1', 'a.b']),
    'olmq.dead.install-plan.c1.ns1.a_b',
  );
  t.equal(
    triggerDeadLetterSubject('resolve', {
      cluster: 'c1',
      kind: 'Subscription',
      namespace: '',
      name: 'x',
    }),
    'olmq.dead.resolve.c1.=trigger.Subscription.-.x',
  );
  t.equal(deadLetterFilter({}), 'olmq.dead.*.*.>');
  t.equal(deadLetterFilter({ fn: 'resolve' }), 'olmq.dead.resolve.*.>');
  t.equal(deadLetterFilter({ cluster: 'c2', key: ['ns1', 'x'] }), 'olmq.dead.*.c2.ns1.x');
  t.end();
});

t.test('dead letters - scheduled redrives back off, doubling up to the cap', (t) => {
  const o = { ...defaultFunctionHostOptions, firstRedriveDelayMs: 1_000, maxRedriveDelayMs: 5_000 };
  t.same(
    [0, 1, 2, 3, 10].map((n) => redriveDelayMs(n, o)),
    [1_000, 2_000, 4_000, 5_000, 5_000],
  );
  const letter = deadLetterSchema.parse({
    function: 'f',
    cluster: 'c1',
    key: [],
    failures: 1,
    error: 'x',
    at: '2026-11-26T12:00:00.000Z',
    redrives: 1,
  });
  t.equal(redriveDueAt(letter, { options: o }), Date.parse('2026-11-26T12:00:02.000Z'));
  const asked = { ...letter, notBefore: '2026-11-26T11:00:00.000Z' };
  t.equal(redriveDueAt(asked, { options: o }), Date.parse(asked.notBefore), 'notBefore wins');
  t.end();
});
