import t from 'tap';
import { PublishWindow } from '../../watcher/publish-window.js';

interface Change {
  seq: number;
  value: string;
}

// A dispatcher whose publishes settle when the test says so, recording what was sent.
function recorder(): {
  sent: string[];
  settle(index: number, ok?: boolean): void;
  dispatch: (key: string, change: Change) => Promise<unknown>;
} {
  const sent: string[] = [];
  const settles: ((ok: boolean) => void)[] = [];
  return {
    sent,
    settle: (index, ok = true) => settles[index]?.(ok),
    dispatch: (key, change) => {
      sent.push(`${key}=${change.value}`);
      return new Promise((resolve, reject) =>
        settles.push((ok) => (ok ? resolve(undefined) : reject(new Error('refused')))),
      );
    },
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

t.test(
  'publish window - sends at most its limit, then the newest change of each waiting key',
  async (t) => {
    const r = recorder();
    const window = new PublishWindow<Change>(2, r.dispatch);
    window.submit('a', { seq: 1, value: 'a1' });
    window.submit('b', { seq: 2, value: 'b1' });
    window.submit('c', { seq: 3, value: 'c1' });
    window.submit('d', { seq: 4, value: 'd1' });
    window.submit('c', { seq: 5, value: 'c2' });
    window.submit('c', { seq: 2, value: 'c-older' }); // an older change never replaces a newer one
    window.submit('a', { seq: 6, value: 'a2' }); // a is in flight, not waiting: it waits behind d
    t.same(r.sent, ['a=a1', 'b=b1'], 'two in flight, the rest waits');
    t.equal(window.inFlight, 2);
    t.same(
      [...window.waiting()].map((c) => c.value),
      ['c2', 'd1', 'a2'],
      'waiting keys keep their first place and their newest change',
    );
    r.settle(0);
    await tick();
    t.same(
      r.sent,
      ['a=a1', 'b=b1', 'c=c2'],
      'an acknowledgement makes room for the oldest waiting key',
    );
    r.settle(1, false);
    await tick();
    t.same(r.sent.slice(3), ['d=d1'], 'a failed publish frees its place too');
    r.settle(2);
    r.settle(3);
    await tick();
    t.same(r.sent.slice(4), ['a=a2']);
    t.equal(window.inFlight, 1);
    r.settle(4);
    await tick();
    t.equal(window.inFlight, 0);
    t.same([...window.waiting()], []);
  },
);

t.test('publish window - a change not sent takes no place; stop drops what waits', async (t) => {
  const r = recorder();
  let hold = true;
  const window = new PublishWindow<Change>(1, (key, change) =>
    hold && key === 'held' ? undefined : r.dispatch(key, change),
  );
  window.submit('held', { seq: 1, value: 'h' });
  window.submit('x', { seq: 2, value: 'x1' });
  t.same(r.sent, ['x=x1'], 'the held change took no place in the window');
  window.submit('y', { seq: 3, value: 'y1' });
  window.stop();
  r.settle(0);
  await tick();
  t.same(r.sent, ['x=x1'], 'nothing is sent after stop');
  hold = false;
  window.submit('z', { seq: 4, value: 'z1' });
  t.same(r.sent, ['x=x1']);
});

t.test('publish window - refuses a limit that is not a positive integer', (t) => {
  t.throws(() => new PublishWindow<Change>(0, () => undefined), /positive integer, got 0/);
  t.throws(() => new PublishWindow<Change>(1.5, () => undefined), /positive integer, got 1.5/);
  t.end();
});
