// Watches in the forms clients ask for with Accept: metadata only (client-go's metadata
// informers: PartialObjectMetadata events, BOOKMARKs too, ERRORs still Status), Table rows
// (kubectl get -w) and whole objects, side by side on the same changes.
import type { ClientHttp2Session } from 'node:http2';
import t from 'tap';
import {
  http2Request,
  http2Session,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

let fixture: ClusterFixture;
let session: ClientHttp2Session;
const cms = '/api/v1/namespaces/default/configmaps';
/** What client-go's metadata client sends (k8s.io/client-go/metadata). */
const metadataAccept =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

t.before(async () => {
  fixture = await startCluster({ bookmarkIntervalMs: 100 });
  session = await http2Session(fixture);
});
t.teardown(async () => {
  session.close();
  await fixture.close();
});

interface WatchEvent {
  type: string;
  object: { kind?: string; apiVersion?: string; metadata?: Record<string, unknown> } & Record<
    string,
    unknown
  >;
}

/** An open watch over HTTP/2: its status, the events so far, and whether it has ended. */
function openWatch(path: string, accept: string | undefined) {
  const stream = session.request({
    ':method': 'GET',
    ':path': path,
    ...(accept !== undefined ? { accept } : {}),
  });
  stream.end();
  const state = { status: 0, text: '', ended: false };
  stream.on('response', (h) => (state.status = Number(h[':status'])));
  stream.on('data', (chunk: Buffer) => (state.text += chunk.toString('utf8')));
  stream.on('end', () => (state.ended = true));
  return {
    state,
    events: (): WatchEvent[] =>
      state.text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as WatchEvent),
  };
}

const post = async (body: unknown) =>
  (await http2Request(session, 'POST', cms, JSON.stringify(body))).status;

void t.test(
  'watch forms - a metadata-only watch sends PartialObjectMetadata, a plain one whole objects',
  async (t) => {
    t.equal(
      await post({ metadata: { name: 'before', labels: { w: 'meta' } }, data: { a: '1' } }),
      201,
    );
    const query = '?watch=true&allowWatchBookmarks=true&labelSelector=w%3Dmeta';
    const meta = openWatch(`${cms}${query}`, metadataAccept);
    const plain = openWatch(`${cms}${query}`, 'application/json');
    await waitFor(
      'both watches answered',
      () => meta.state.status === 200 && plain.state.status === 200,
      5000,
    );
    t.equal(
      await post({ metadata: { name: 'after', labels: { w: 'meta' } }, data: { b: '2' } }),
      201,
    );
    t.equal((await http2Request(session, 'DELETE', `${cms}/after`)).status, 200);
    const done = (w: ReturnType<typeof openWatch>) => () =>
      w.events().some((e) => e.type === 'DELETED') && w.events().some((e) => e.type === 'BOOKMARK');
    await waitFor('the metadata watch saw the delete and a bookmark', done(meta), 5000);
    await waitFor('the plain watch saw the delete and a bookmark', done(plain), 5000);

    const metaEvents = meta.events();
    t.same(
      metaEvents
        .filter((e) => e.type !== 'BOOKMARK')
        .map((e) => [e.type, e.object.metadata?.['name']]),
      [
        ['ADDED', 'before'],
        ['ADDED', 'after'],
        ['DELETED', 'after'],
      ],
    );
    for (const event of metaEvents) {
      t.equal(event.object.kind, 'PartialObjectMetadata', `${event.type} kind`);
      t.equal(event.object.apiVersion, 'meta.k8s.io/v1', `${event.type} apiVersion`);
      t.match(event.object.metadata, { resourceVersion: /^\d+$/ }, `${event.type} resourceVersion`);
      t.same(
        Object.keys(event.object).sort(),
        ['apiVersion', 'kind', 'metadata'],
        `${event.type} has metadata only`,
      );
      if (event.type !== 'BOOKMARK') t.same(event.object.metadata?.['labels'], { w: 'meta' });
    }
    for (const event of plain.events()) {
      t.equal(event.object.kind, 'ConfigMap', `plain ${event.type} kind`);
      t.equal(event.object.apiVersion, 'v1', `plain ${event.type} apiVersion`);
      if (event.type !== 'BOOKMARK') t.ok(event.object['data'], `plain ${event.type} has data`);
    }
  },
);

void t.test('watch forms - a metadata-only watch too far back gets an ERROR Status', async (t) => {
  t.equal(await post({ metadata: { name: 'expired' } }), 201);
  fixture.cluster.faults.expireWatches();
  const meta = openWatch(`${cms}?watch=true&resourceVersion=1`, metadataAccept);
  await waitFor('the watch ended', () => meta.state.ended, 5000);
  const events = meta.events();
  t.equal(events.length, 1);
  t.equal(events[0]?.type, 'ERROR');
  t.match(events[0]?.object, { kind: 'Status', apiVersion: 'v1', code: 410, reason: 'Expired' });
});

void t.test('watch forms - a Table watch (kubectl get -w) sends a Table per event', async (t) => {
  t.equal(
    await post({ metadata: { name: 'tabled', labels: { w: 'table' } }, data: { a: '1' } }),
    201,
  );
  const table = openWatch(
    `${cms}?watch=true&labelSelector=w%3Dtable&timeoutSeconds=1`,
    tableAccept,
  );
  await waitFor('the Table watch ended', () => table.state.ended, 5000);
  const events = table.events();
  t.same(
    events.map((e) => e.type),
    ['ADDED'],
  );
  t.match(events[0]?.object, {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    rows: [{ cells: ['tabled', 1, String], object: { kind: 'PartialObjectMetadata' } }],
  });
});
