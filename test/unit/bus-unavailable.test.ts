// Which NATS-side failures are waited out without counting toward a dead letter:
// shared/bus/unavailable.ts.
import t from 'tap';
import { MirrorViewLagError } from '../../shared/bus/mirror-view.js';
import { isBackboneUnavailable } from '../../shared/bus/unavailable.js';

void t.test('bus unavailable - a mirror view or copy that could not catch up', (t) => {
  t.ok(isBackboneUnavailable(new MirrorViewLagError('cluster c1', 10_000)), 'retried, not failed');
  t.ok(
    isBackboneUnavailable(new Error('load failed', { cause: new MirrorViewLagError('x', 0) })),
    'as the cause of another error too',
  );
  t.notOk(isBackboneUnavailable(new Error('the object is malformed')), 'an error of the work');
  t.end();
});
