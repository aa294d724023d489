import t from 'tap';
import { registryProtocol, type ApiBundle } from '../../shared/registry/protocol.js';
import { decodeBundleManifestBytes, WireFormatError } from '../../shared/registry/wire.js';

const bundle: ApiBundle = {
  csvName: 'demo.v1.0.0',
  packageName: 'demo',
  channelName: 'stable',
  csvJson: '{"kind":"ClusterServiceVersion","metadata":{"name":"démo"}}',
  object: [
    '{"kind":"CustomResourceDefinition"}',
    '{"kind":"ClusterServiceVersion","metadata":{"name":"démo"}}',
  ],
  bundlePath: 'quay.io/example/demo:1.0.0',
  providedApis: [{ group: 'example.com', version: 'v1', kind: 'Demo', plural: 'demos' }],
  requiredApis: [],
  version: '1.0.0',
  skipRange: '<1.0.0',
  dependencies: [],
  properties: [{ type: 'olm.package', value: '{"packageName":"demo","version":"1.0.0"}' }],
  replaces: '',
  skips: ['demo.v0.9.0'],
  deprecation: { message: 'old' },
};

t.test('registry wire - csvJson and object are read as bytes from a Bundle message', (t) => {
  const bytes = registryProtocol().registry.GetBundle.responseSerialize(bundle);
  const read = decodeBundleManifestBytes(bytes);
  t.equal(read.csvJson?.toString('utf8'), bundle.csvJson);
  t.same(
    read.object.map((o) => o.toString('utf8')),
    bundle.object,
    'in order, UTF-8 intact',
  );
  t.end();
});

t.test('registry wire - a message without manifests has none', (t) => {
  const bytes = registryProtocol().registry.GetBundle.responseSerialize({
    ...bundle,
    csvJson: '',
    object: [],
  });
  t.same(decodeBundleManifestBytes(bytes), { csvJson: null, object: [] });
  t.end();
});

t.test('registry wire - truncated bytes are a WireFormatError, not a crash', (t) => {
  const bytes = registryProtocol().registry.GetBundle.responseSerialize(bundle);
  t.throws(() => decodeBundleManifestBytes(bytes.subarray(0, bytes.length - 5)), WireFormatError);
  t.throws(() => decodeBundleManifestBytes(Buffer.from([0x0f])), WireFormatError);
  t.end();
});
