import t from 'tap';
import { ApiError } from '../../devcluster/api/errors.js';
import { decodeProtobufBody } from '../../devcluster/server/protobuf.js';

// Request bodies as kubectl 1.33 sends them (captured with -v=10).
const clusterRole =
  '6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c6512230a120a02637212001a0022002a00320038004200120d0a0367657412001a04706f64731a002200';
const secret =
  '6b3873000a0c0a0276311206536563726574121f0a130a0373656312001a0022002a0032003800420012060a016b1201761a001a002200';
const deployment =
  '6b3873000a150a07617070732f7631120a4465706c6f796d656e7412ac010a1d0a02646412001a0022002a003200380042005a090a0361707012026464127d0802120b0a090a03617070120264641a640a1b0a0012001a0022002a003200380042005a090a0361707012026464124512270a056e67696e78120a6e67696e783a312e32352a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200';

void t.test('protobuf - a ClusterRole keeps the core group as an empty apiGroups entry', (t) => {
  t.same(decodeProtobufBody(Buffer.from(clusterRole, 'hex')), {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'cr' },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  });
  t.end();
});

void t.test('protobuf - Secret data bytes become base64', (t) => {
  t.same(decodeProtobufBody(Buffer.from(secret, 'hex')), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'sec' },
    data: { k: Buffer.from('v').toString('base64') },
  });
  t.end();
});

void t.test('protobuf - a Deployment decodes its spec, template and containers', (t) => {
  const object = decodeProtobufBody(Buffer.from(deployment, 'hex'));
  t.match(object, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'dd', labels: { app: 'dd' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'dd' } },
      template: {
        metadata: { labels: { app: 'dd' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }] },
      },
    },
  });
  t.end();
});

void t.test('protobuf - a body without the magic number is a BadRequest', (t) => {
  t.throws(() => decodeProtobufBody(Buffer.from('{}')), ApiError);
  t.end();
});

void t.test('protobuf - a kind without a schema is a 415', (t) => {
  // Unknown{typeMeta{apiVersion "v1", kind "Pod"}, raw ""}
  const body = Buffer.concat([
    Buffer.from([0x6b, 0x38, 0x73, 0x00]),
    Buffer.from('0a090a0276311203506f641200', 'hex'),
  ]);
  try {
    decodeProtobufBody(body);
    t.fail('expected an error');
  } catch (error) {
    t.equal(error instanceof ApiError ? error.code : 0, 415);
  }
  t.end();
});
