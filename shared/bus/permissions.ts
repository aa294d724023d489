// Least-privilege NATS permissions of each olmq component, derived from the layout in
// subjects.ts, and rendered as a nats-server `authorization` block (k8s/nats-server.conf is
// generated from it). What matters most: only the watcher writes the object mirror (and the
// catalog and resolve functions their own record kinds in it), only the catalog function writes
// catalog content, and every component reads replies on its own inbox prefix only, so none can
// see another's answers. Work items may be published by every function (follow-ups cross
// functions, and a work item only asks for a level-triggered reconcile).
import { leaderElectedSubject } from './consumer-leaders.js';
import { assets, bodySubjects, encodeToken, kvStream } from './subjects.js';

/** Subjects a user may publish to and subscribe to. */
export interface Permissions {
  publish: string[];
  subscribe: string[];
}

/** What one component does on the backbone. */
export interface ComponentRole {
  /** The component, e.g. "watcher" or "install"; also its inbox prefix (inboxPrefixOf). */
  name: string;
  /** The work queues it consumes (functionQueues of functions/index.ts); none for others. */
  queues: readonly string[];
  /** Record kinds it puts into the mirror beside the watcher's objects (e.g. CatalogIndex). */
  mirrorRecordKinds: readonly string[];
  /** The watcher: creates and changes the backbone's streams, writes the mirror, purges markers. */
  watcher: boolean;
  /** Creates and writes the catalog object store and its sync bucket (the catalog function). */
  catalogWriter: boolean;
  /** Creates and writes the store of unpacked bundle images (the plan function). */
  bundleWriter: boolean;
}

/** Object store of catalog content, and the catalog function's sync bucket (see their modules). */
const catalogObjectStream = 'OBJ_olmq_catalogs';
const catalogObjectSubjects = '$O.olmq_catalogs.>';
const catalogSyncStream = 'KV_olmq_catalog_syncs';
const catalogSyncSubjects = '$KV.olmq_catalog_syncs.>';
/** Object store of unpacked bundle images (shared/bundle-image/store.ts). */
const bundleObjectStream = 'OBJ_olmq_bundles';
const bundleObjectSubjects = '$O.olmq_bundles.>';

/** The prefix of a component's reply subjects. */
export const inboxPrefixOf = (component: string): string => `_INBOX.${encodeToken(component)}`;

const api = '$JS.API';

/** Reading a stream: info, direct and classic gets, and short-lived (ordered) consumers. */
function readStream(stream: string): string[] {
  return [
    `${api}.STREAM.INFO.${stream}`,
    `${api}.STREAM.MSG.GET.${stream}`,
    `${api}.DIRECT.GET.${stream}`,
    `${api}.DIRECT.GET.${stream}.>`,
    `${api}.CONSUMER.CREATE.${stream}`,
    `${api}.CONSUMER.CREATE.${stream}.>`,
    `${api}.CONSUMER.INFO.${stream}.>`,
    `${api}.CONSUMER.DELETE.${stream}.>`,
    `${api}.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.FC.${stream}.>`,
  ];
}

/** Creating and changing a stream (its limits, replicas). */
function adminStream(stream: string): string[] {
  return [`${api}.STREAM.CREATE.${stream}`, `${api}.STREAM.UPDATE.${stream}`];
}

/**
 * A queue's durable work consumers and their acks, and the queue's lease and failure keys. A
 * pool has one work consumer per (queue, cluster), `<queue>-work-<cluster>`, and clusters join
 * at run time, so consumer names cannot be listed here (NATS has no name-prefix wildcard):
 * creating one is allowed only with a filter inside the queue's own work subjects (the
 * create-with-filter subject NATS 2.9 clients use), and reading, pulling and acking by any
 * name of OLMQ_WORK. The all-cluster consumer of olmq before pools may be removed.
 */
function consumeQueue(queue: string): string[] {
  const token = encodeToken(queue);
  const stream = assets.workStream;
  return [
    `${api}.CONSUMER.CREATE.${stream}.*.olmq.work.${token}.>`,
    `${api}.CONSUMER.DELETE.${stream}.${queue}-work`,
    `$KV.${assets.leases}.${token}.>`,
    `$KV.${assets.attempts}.${token}.>`,
    `olmq.dead.${token}.>`,
  ];
}

/** The permissions `role` needs, and nothing more. */
export function componentPermissions(role: ComponentRole): Permissions {
  const mirror = kvStream(assets.objects);
  const publish = [`${api}.INFO`, ...readStream(mirror)];
  const streams = [mirror, kvStream(assets.leases), kvStream(assets.attempts)];
  streams.push(assets.workStream, assets.deadStream, assets.bodyStream);
  for (const stream of streams.slice(1)) publish.push(`${api}.STREAM.INFO.${stream}`);
  // Mirror values too large for a publish are read from their chunks (large-values.ts).
  publish.push(...readStream(assets.bodyStream));
  // Every component reads catalogs (the package server and the functions that resolve or plan),
  // and may create their (empty) store when it starts before the catalog function; only the
  // catalog function writes content or changes the store.
  publish.push(...readStream(catalogObjectStream), `${api}.STREAM.CREATE.${catalogObjectStream}`);
  if (role.watcher) {
    for (const stream of streams) publish.push(...adminStream(stream));
    publish.push(`$KV.${assets.objects}.>`, `${api}.STREAM.PURGE.${mirror}`);
    publish.push(bodySubjects);
  }
  for (const kind of role.mirrorRecordKinds) {
    publish.push(`$KV.${assets.objects}.*.${encodeToken(kind)}.>`);
    publish.push(`olmq.body.*.${encodeToken(kind)}.>`);
  }
  // Writers of the mirror upload large values and purge a key's older uploads.
  if (role.watcher || role.mirrorRecordKinds.length > 0)
    publish.push(`${api}.STREAM.PURGE.${assets.bodyStream}`);
  if (role.catalogWriter) {
    publish.push(`${api}.STREAM.UPDATE.${catalogObjectStream}`, catalogObjectSubjects);
    publish.push(`${api}.STREAM.PURGE.${catalogObjectStream}`);
    publish.push(...adminStream(catalogSyncStream), ...readStream(catalogSyncStream));
    publish.push(catalogSyncSubjects);
  }
  if (role.bundleWriter) {
    publish.push(...readStream(bundleObjectStream), ...adminStream(bundleObjectStream));
    publish.push(bundleObjectSubjects, `${api}.STREAM.PURGE.${bundleObjectStream}`);
  }
  if (role.queues.length > 0) {
    // Work of any queue (follow-ups), its own queues' consumers, leases, failures, dead letters.
    publish.push('olmq.work.>', `${api}.STREAM.MSG.DELETE.${kvStream(assets.leases)}`);
    publish.push(...readStream(kvStream(assets.leases)), ...readStream(kvStream(assets.attempts)));
    publish.push(`$JS.ACK.${mirror}.>`);
    // Dead letters: listed and redriven on a schedule, removed once handled (dead-letters.ts).
    publish.push(...readStream(assets.deadStream));
    publish.push(`${api}.STREAM.MSG.DELETE.${assets.deadStream}`);
    publish.push(`${api}.STREAM.PURGE.${assets.deadStream}`);
    publish.push(`${api}.CONSUMER.INFO.${assets.workStream}.*`);
    publish.push(`${api}.CONSUMER.MSG.NEXT.${assets.workStream}.*`);
    publish.push(`$JS.ACK.${assets.workStream}.*.>`);
    for (const queue of role.queues) publish.push(...consumeQueue(queue));
  }
  // Functions hear the leader elections of their durable consumers (consumer-leaders.ts).
  const advisories =
    role.queues.length > 0
      ? [leaderElectedSubject(assets.workStream), leaderElectedSubject(mirror)]
      : [];
  return {
    publish: [...new Set(publish)],
    subscribe: [`${inboxPrefixOf(role.name)}.>`, ...advisories],
  };
}

/** The union of several roles' permissions (e.g. `olmq up`, which runs every part). */
export function unionPermissions(all: readonly Permissions[]): Permissions {
  return {
    publish: [...new Set(all.flatMap((p) => p.publish))],
    subscribe: [...new Set(all.flatMap((p) => p.subscribe))],
  };
}

/** One user of the rendered configuration. */
export interface NatsUser {
  user: string;
  /** Written as is: a literal (quoted) or a `$VARIABLE` the server reads from its environment. */
  password: string;
  permissions: Permissions;
  /** One comment line above the user. */
  comment?: string;
}

const quote = (text: string): string => JSON.stringify(text);

/** A nats-server `authorization { users: [...] }` block. */
export function renderAuthorization(users: readonly NatsUser[]): string {
  const lines = ['authorization {', '  users: ['];
  for (const u of users) {
    if (u.comment !== undefined) lines.push(`    # ${u.comment}`);
    const password = u.password.startsWith('$') ? u.password : quote(u.password);
    lines.push('    {', `      user: ${quote(u.user)}`, `      password: ${password}`);
    lines.push('      permissions: {');
    for (const [verb, subjects] of [
      ['publish', u.permissions.publish],
      ['subscribe', u.permissions.subscribe],
    ] as const) {
      lines.push(`        ${verb}: { allow: [`);
      for (const s of subjects) lines.push(`          ${quote(s)}`);
      lines.push('        ] }');
    }
    lines.push('      }', '    }');
  }
  lines.push('  ]', '}');
  return lines.join('\n');
}
