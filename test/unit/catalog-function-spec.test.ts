// The catalog function's reading of CatalogSource specs and of its own environment.
import t from 'tap';
import {
  catalogConfigFromEnv,
  CatalogConfigError,
  parseRegistryAddresses,
} from '../../functions/catalog/config.js';
import { parseGoDuration, pollSettingOf, sourceKindOf } from '../../functions/catalog/spec.js';

t.test('catalog spec - source kinds and upstream validation messages', (t) => {
  t.equal(sourceKindOf({ sourceType: 'configmap', configMap: 'cm' }), 'configmap');
  t.equal(sourceKindOf({ sourceType: 'internal', configMap: 'cm' }), 'configmap');
  t.equal(sourceKindOf({ sourceType: 'grpc', address: 'h:1' }), 'grpc-address');
  t.equal(
    sourceKindOf({ sourceType: 'grpc', address: 'h:1', image: 'i' }),
    'grpc-image',
    'an image wins over an address',
  );
  const message = (spec: Parameters<typeof sourceKindOf>[0]) => {
    const kind = sourceKindOf(spec);
    return kind instanceof Error ? { message: kind.message, retryable: kind.retryable } : kind;
  };
  t.same(message({ sourceType: 'internal' }), {
    message: 'configmap name unset: must be set for sourcetype: internal',
    retryable: false,
  });
  t.same(message({ sourceType: 'grpc' }), {
    message: 'image and address unset: at least one must be set for sourcetype: grpc',
    retryable: false,
  });
  t.same(message({ sourceType: 'GRPC' }), {
    message: 'unknown sourcetype: GRPC',
    retryable: false,
  });
  t.end();
});

t.test('catalog spec - Go durations parse as time.ParseDuration does, with its errors', (t) => {
  t.equal(parseGoDuration('15m'), 900_000);
  t.equal(parseGoDuration('1h30m'), 5_400_000);
  t.equal(parseGoDuration('500ms'), 500);
  t.equal(parseGoDuration('1.5s'), 1_500);
  t.equal(parseGoDuration('0'), 0);
  t.equal(parseGoDuration('abc'), 'time: invalid duration "abc"');
  t.equal(parseGoDuration(''), 'time: invalid duration ""');
  t.equal(parseGoDuration('5'), 'time: missing unit in duration "5"');
  t.equal(parseGoDuration('5x'), 'time: unknown unit "x" in duration "5x"');
  t.end();
});

t.test('catalog spec - a bad poll interval falls back to 15m with upstream message', (t) => {
  t.equal(pollSettingOf({ sourceType: 'grpc' }), undefined, 'not polled');
  t.same(
    pollSettingOf({ sourceType: 'grpc', updateStrategy: { registryPoll: { interval: '10m' } } }),
    { intervalMs: 600_000 },
  );
  t.same(
    pollSettingOf({ sourceType: 'grpc', updateStrategy: { registryPoll: { interval: 'often' } } }),
    {
      intervalMs: 900_000,
      parsingError:
        'error parsing spec.updateStrategy.registryPoll.interval. Using the default value of 15m0s instead. Error: time: invalid duration "often"',
    },
  );
  t.end();
});

t.test(
  'catalog config - registry address mappings are explicit namespace/service=host:port',
  (t) => {
    t.same(
      [...parseRegistryAddresses('olm/community=127.0.0.1:50051, dev/my-catalog=localhost:9000')],
      [
        ['olm/community', '127.0.0.1:50051'],
        ['dev/my-catalog', 'localhost:9000'],
      ],
    );
    t.throws(() => parseRegistryAddresses('community=127.0.0.1:50051'), {
      name: 'CatalogConfigError',
      message:
        'OLMQ_CATALOG_REGISTRY_ADDRESSES: "community=127.0.0.1:50051" is not namespace/service=host:port',
    });
    t.throws(() => parseRegistryAddresses('olm/community=127.0.0.1'), CatalogConfigError);
    t.end();
  },
);

t.test('catalog config - the environment is parsed once, errors name the variable', (t) => {
  const config = catalogConfigFromEnv({
    OLMQ_CATALOG_RESYNC: '5m',
    OLMQ_CATALOG_REGISTRY_ADDRESSES: 'olm/c=h:1',
  });
  t.equal(config.resyncMs, 300_000);
  t.equal(config.retryMs, 30_000, 'default');
  t.equal(config.registryAddresses.get('olm/c'), 'h:1');
  t.ok(Object.isFrozen(config));
  t.throws(() => catalogConfigFromEnv({ OLMQ_CATALOG_RETRY: 'soon' }), {
    name: 'CatalogConfigError',
    message: 'OLMQ_CATALOG_RETRY: time: invalid duration "soon"',
  });
  t.end();
});

t.test('catalog config - image mode, registry files and mirrors from the environment', (t) => {
  const defaults = catalogConfigFromEnv({});
  t.equal(defaults.imageMode, 'direct', 'images are read directly by default');
  t.same(defaults.registryCaFiles, []);
  t.equal(defaults.registryAuthFile, undefined);
  const config = catalogConfigFromEnv({
    OLMQ_CATALOG_IMAGE_MODE: 'pod',
    OLMQ_REGISTRY_AUTH_FILE: '/run/secrets/auth.json',
    OLMQ_REGISTRY_CA_FILES: '/a.pem, /b.pem',
    OLMQ_REGISTRY_MIRRORS: 'quay.io=mirror.local/quay',
  });
  t.equal(config.imageMode, 'pod');
  t.equal(config.registryAuthFile, '/run/secrets/auth.json');
  t.same(config.registryCaFiles, ['/a.pem', '/b.pem']);
  t.same(config.registryMirrors, [
    { source: 'quay.io', mirrors: ['mirror.local/quay'], digestOnly: true },
  ]);
  t.throws(() => catalogConfigFromEnv({ OLMQ_CATALOG_IMAGE_MODE: 'sidecar' }), {
    name: 'CatalogConfigError',
    message: 'OLMQ_CATALOG_IMAGE_MODE: must be direct or pod',
  });
  t.throws(() => catalogConfigFromEnv({ OLMQ_REGISTRY_MIRRORS: 'quay.io' }), {
    name: 'CatalogConfigError',
    message: /^OLMQ_REGISTRY_MIRRORS: bad mirror rule "quay.io"/,
  });
  t.end();
});
