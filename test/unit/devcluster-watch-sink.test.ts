// Watch lines are written as one chunk per watch and flush; watches holding the same lines share it.
import t from 'tap';
import { joinLines } from '../../devcluster/server/watch-sink.js';

const line = (text: string) => Buffer.from(`${text}\n`);

void t.test('watch sink - lines are joined into one chunk in order', (t) => {
  const lines = [line('a'), line('b'), line('c')];
  t.equal(joinLines(lines).toString(), 'a\nb\nc\n');
  t.end();
});

void t.test('watch sink - a single line is written as it is', (t) => {
  const only = line('only');
  t.equal(joinLines([only]), only);
  t.end();
});

void t.test('watch sink - watches holding the same lines share one joined chunk', (t) => {
  const a = line('a');
  const b = line('b');
  const first = joinLines([a, b]);
  t.equal(joinLines([a, b]), first, 'the same line buffers: the same chunk');
  const other = joinLines([a, line('b')]);
  t.not(other, first, 'equal text in other buffers is joined anew');
  t.equal(other.toString(), 'a\nb\n');
  t.equal(joinLines([b, a]).toString(), 'b\na\n', 'order matters');
  t.end();
});
