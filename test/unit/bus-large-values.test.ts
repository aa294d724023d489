import t from 'tap';
import { headers as natsHeaders } from '@nats-io/transport-node';
import {
  BodyCorruptError,
  chunksOf,
  decodeBodyRef,
  encodeBodyRef,
  headerAllowance,
  inlineLimit,
  isBodyRef,
  bodyHeader,
  sha256Of,
  type BodyRef,
} from '../../shared/bus/large-values.js';
import { bodyFilter, bodySubject, parseBodySubject } from '../../shared/bus/subjects.js';

t.test('large values - chunks cover the value in order, none larger than asked', (t) => {
  const value = new Uint8Array(2_500_000).map((_, i) => i % 251);
  const chunks = chunksOf(value, 1_000_000);
  t.same(
    chunks.map((c) => c.length),
    [1_000_000, 1_000_000, 500_000],
  );
  t.same(Buffer.concat(chunks), Buffer.from(value));
  t.same(
    chunksOf(new Uint8Array(3), 3).map((c) => c.length),
    [3],
    'a value of exactly one chunk is one chunk',
  );
  t.same(
    chunksOf(new Uint8Array(0), 10).map((c) => c.length),
    [0],
    'an empty value is one empty chunk',
  );
  t.throws(() => chunksOf(value, 0), RangeError);
  t.end();
});

t.test("large values - the inline limit is the server's max payload less room for headers", (t) => {
  const nc = (max: number | undefined) =>
    ({ nc: { info: max === undefined ? undefined : { max_payload: max } } }) as Parameters<
      typeof inlineLimit
    >[0];
  t.equal(inlineLimit(nc(1024 * 1024)), 1024 * 1024 - headerAllowance);
  t.equal(inlineLimit(nc(8 * 1024 * 1024)), 8 * 1024 * 1024 - headerAllowance);
  t.equal(inlineLimit(nc(undefined)), 1024 * 1024 - headerAllowance, 'default when unknown');
  t.end();
});

t.test('large values - a reference round-trips and a malformed one is refused', (t) => {
  const ref: BodyRef = {
    subject: bodySubject('c1.ClusterServiceVersion.ns1.big', 'abc123'),
    seq: 42,
    size: 1_060_684,
    sha256: sha256Of(new Uint8Array([1, 2, 3])),
  };
  t.same(decodeBodyRef(new TextEncoder().encode(encodeBodyRef(ref))), ref);
  for (const bad of ['', 'null', '{"subject":"x","seq":1,"size":1,"sha256":"00"}', '{'])
    t.throws(() => decodeBodyRef(new TextEncoder().encode(bad)), BodyCorruptError, bad);
  t.end();
});

t.test('large values - only messages with the body header are references', (t) => {
  const h = natsHeaders();
  t.equal(isBodyRef(h), false);
  t.equal(isBodyRef(undefined), false);
  h.set(bodyHeader, '1');
  t.equal(isBodyRef(h), true);
  t.end();
});

t.test(
  "large values - an upload's subject names its mirror key; the filter matches only that key",
  (t) => {
    const key = 'c1.InstallPlan.ns1.install-abcde';
    const subject = bodySubject(key, 'f00d');
    t.same(parseBodySubject(subject), { key, upload: 'f00d' });
    t.equal(bodyFilter(key), 'olmq.body.c1.InstallPlan.ns1.install-abcde.*');
    t.throws(() => parseBodySubject('olmq.work.x.y'));
    t.end();
  },
);
