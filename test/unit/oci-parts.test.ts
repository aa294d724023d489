// The registry client's pure parts: references, auth challenges, dockerconfigjson, mirror
// rules and the tar reader/writer.
import t from 'tap';
import { parseChallenge } from '../../shared/oci/auth.js';
import { candidatesFor } from '../../shared/oci/mirrors.js';
import {
  credentialsFromDockerConfigs,
  isLoopbackRegistry,
  parseImageReference,
  parseMirrorRules,
  readTar,
  writeTar,
} from '../../shared/oci/index.js';

t.test('oci reference - Docker Hub defaults, ports, digests', (t) => {
  t.same(parseImageReference('busybox'), {
    registry: 'docker.io',
    repository: 'library/busybox',
    tag: 'latest',
  });
  t.same(parseImageReference('quay.io/org/cat:v4.17'), {
    registry: 'quay.io',
    repository: 'org/cat',
    tag: 'v4.17',
  });
  const digest = `sha256:${'a'.repeat(64)}`;
  t.same(parseImageReference(`localhost:5000/x/y:t@${digest}`), {
    registry: 'localhost:5000',
    repository: 'x/y',
    tag: 't',
    digest,
  });
  t.throws(() => parseImageReference('quay.io/Org/x'), { code: 'InvalidReference' });
  t.throws(() => parseImageReference(''), { code: 'InvalidReference' });
  t.ok(isLoopbackRegistry('127.0.0.1:5000'));
  t.ok(isLoopbackRegistry('localhost'));
  t.ok(isLoopbackRegistry('[::1]:5000'));
  t.notOk(isLoopbackRegistry('quay.io'));
  t.notOk(isLoopbackRegistry('127.example.com'));
  t.end();
});

t.test('oci auth - challenges and dockerconfigjson', (t) => {
  t.same(
    parseChallenge(
      'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"',
    ),
    {
      scheme: 'bearer',
      params: {
        realm: 'https://auth.example/token',
        service: 'registry.example',
        scope: 'repository:a/b:pull',
      },
    },
  );
  t.same(parseChallenge('Basic realm="x"'), { scheme: 'basic', params: { realm: 'x' } });
  t.equal(parseChallenge('Negotiate'), undefined);
  const lookup = credentialsFromDockerConfigs([
    {
      source: 'a',
      json: JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': {
            auth: Buffer.from('hub:pw:with:colons').toString('base64'),
          },
          'quay.io': { username: 'q', password: 'p' },
        },
      }),
    },
    {
      source: 'b',
      json: JSON.stringify({
        'quay.io': { username: 'later', password: 'loses' },
        'ghcr.io': { identitytoken: 'tok' },
      }),
    },
  ]);
  t.same(lookup('docker.io'), { kind: 'basic', username: 'hub', password: 'pw:with:colons' });
  t.same(lookup('quay.io'), { kind: 'basic', username: 'q', password: 'p' });
  t.same(lookup('ghcr.io'), { kind: 'identityToken', token: 'tok' });
  t.equal(lookup('example.com'), undefined);
  t.throws(() => credentialsFromDockerConfigs([{ source: 'secret ns/bad', json: '{' }]), {
    code: 'BadCredentials',
    message: 'secret ns/bad: not valid dockerconfigjson (bad JSON)',
  });
  t.end();
});

t.test('oci mirrors - longest source wins, digest-only rules skip tags', (t) => {
  const rules = parseMirrorRules(
    'quay.io=mirror.local/quay; quay.io/org!tags=m1.local/org,m2.local/o',
    '--registry-mirrors',
  );
  t.same(rules, [
    { source: 'quay.io', mirrors: ['mirror.local/quay'], digestOnly: true },
    { source: 'quay.io/org', mirrors: ['m1.local/org', 'm2.local/o'], digestOnly: false },
  ]);
  const tagged = candidatesFor(parseImageReference('quay.io/org/cat:v1'), rules);
  t.same(
    tagged.map((r) => `${r.registry}/${r.repository}`),
    ['m1.local/org/cat', 'm2.local/o/cat', 'quay.io/org/cat'],
  );
  const other = candidatesFor(parseImageReference('quay.io/other/cat:v1'), rules);
  t.same(
    other.map((r) => r.registry),
    ['quay.io'],
    'digest-only: a tag pull goes to the source',
  );
  const pinned = candidatesFor(
    parseImageReference(`quay.io/other/cat@sha256:${'b'.repeat(64)}`),
    rules,
  );
  t.same(
    pinned.map((r) => `${r.registry}/${r.repository}`),
    ['mirror.local/quay/other/cat', 'quay.io/other/cat'],
  );
  t.throws(() => parseMirrorRules('quay.io', '--registry-mirrors'), {
    message: /--registry-mirrors: bad mirror rule "quay.io"/,
  });
  t.end();
});

t.test('oci tar - round trip with long paths, and a corrupt header is refused', (t) => {
  const long = `configs/${'p'.repeat(120)}/catalog.json`;
  const tar = writeTar(
    new Map([
      ['a.txt', 'A'],
      [long, 'L'],
    ]),
  );
  const entries = readTar(tar, 'test');
  t.same(
    entries.map((e) => [e.path, e.data.toString()]),
    [
      ['a.txt', 'A'],
      [long, 'L'],
    ],
  );
  const broken = Buffer.from(tar);
  broken[10] = 0x41;
  t.throws(() => readTar(broken, 'layer x'), {
    code: 'BadResponse',
    message: /layer x: not a valid tar archive: bad header checksum/,
  });
  t.end();
});
