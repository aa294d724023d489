// `kubectl olmq install|upgrade|uninstall PACKAGE`: the Subscription (and OperatorGroup) an
// install takes, approvals, channel switches, and the clean-up of an uninstall — as
// `kubectl operator` does them, waiting (--wait) with progress on stderr.
import type { KubeClient } from '../../shared/kube/client.js';
import {
  booleanFlag,
  choiceFlag,
  durationFlag,
  operands,
  stringFlag,
  type GlobalOptions,
  type ParsedArgs,
} from './args.js';
import { diagnose, WhyCause } from './diagnosis.js';
import { render, type Printer } from './output.js';
import { channelOf, findPackage } from './packages.js';
import { pollUntil } from './progress.js';
import { api, getView, listView, type Session } from './session.js';
import { findSubscription, whySnapshot } from './why.js';
import {
  csvView,
  installPlanView,
  operatorGroupView,
  subscriptionView,
  UsageError,
  type SubscriptionView,
} from './types.js';

const defaultTimeoutMs = 5 * 60_000;

const olmRef = (kind: string, namespace: string, name: string) => ({
  apiVersion: api.olm,
  kind,
  namespace,
  name,
});

/** Approves `plan` (spec.approved), as `kubectl patch ip` would. */
async function approve(client: KubeClient, namespace: string, plan: string): Promise<void> {
  await client.patch(olmRef('InstallPlan', namespace, plan), 'merge', { spec: { approved: true } });
}

/** Ensures an OperatorGroup in `namespace` when asked; otherwise warns when there is none. */
async function operatorGroupFor(
  session: Session,
  create: boolean,
  supportsOwnNamespace: boolean,
  printer: Printer,
): Promise<string | undefined> {
  const ns = session.namespace;
  const groups = await listView(
    session.client,
    { apiVersion: api.olmV1, kind: 'OperatorGroup', namespace: ns },
    operatorGroupView,
  );
  if (groups.length > 0) return undefined;
  if (!create) {
    printer.progress(
      `warning: namespace "${ns}" has no OperatorGroup; nothing will install until one exists (pass --create-operator-group)\n`,
    );
    return undefined;
  }
  // Own namespace when the operator supports it (the narrowest scope); all namespaces otherwise.
  await session.client.create({
    apiVersion: api.olmV1,
    kind: 'OperatorGroup',
    metadata: { name: ns, namespace: ns },
    spec: supportsOwnNamespace ? { targetNamespaces: [ns] } : {},
  });
  return ns;
}

/** Waits until the Subscription's CSV has Succeeded (or stops at a definite failure). */
async function waitInstalled(
  session: Session,
  name: string,
  timeoutMs: number,
  printer: Printer,
  until?: string,
): Promise<SubscriptionView | undefined> {
  return pollUntil(
    printer,
    `subscription "${name}" to install${until === undefined ? '' : ` ${until}`}`,
    timeoutMs,
    async () => {
      const sub = await findSubscription(session.client, session.namespace, name);
      const snap = await whySnapshot(session.client, sub);
      const { finding } = diagnose(snap);
      // Only failures that do not heal by themselves stop the wait; the rest is progress.
      if (
        finding?.cause === WhyCause.InstallPlanFailed ||
        (finding?.cause === WhyCause.CsvFailed && snap.deployments.length === 0)
      )
        return {
          done: false,
          status: finding.cause,
          failed: `${finding.message} (see: kubectl olmq why ${name} -n ${session.namespace})`,
        };
      const installed = sub.status?.installedCSV;
      const done =
        installed !== undefined &&
        snap.csv?.status?.phase === 'Succeeded' &&
        (until === undefined ? installed === sub.status?.currentCSV : installed === until);
      const status =
        finding !== undefined
          ? `${finding.cause}: ${finding.message}`
          : `CSV ${snap.csv?.metadata.name ?? sub.status?.currentCSV ?? '<pending>'} ${snap.csv?.status?.phase ?? 'pending'}`;
      if (finding?.cause === WhyCause.ApprovalRequired && until === undefined)
        return { done: true, status, value: sub };
      return { done, status, value: sub };
    },
  );
}

/** `install PACKAGE`. */
export async function install(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const [pkgName] = operands(args, 1, ['PACKAGE']) as [string];
  const approval = choiceFlag(args, 'approval', ['Automatic', 'Manual'] as const) ?? 'Automatic';
  const version = stringFlag(args, 'version');
  const timeoutMs = durationFlag(args, 'timeout', defaultTimeoutMs);
  const pkg = await findPackage(
    session.client,
    session.namespace,
    pkgName,
    stringFlag(args, 'catalog'),
  );
  const channel = channelOf(pkg, stringFlag(args, 'channel'));
  let startingCSV: string | undefined;
  if (version !== undefined) {
    const entry = (channel.entries ?? []).find(
      (e) => e.version === version || e.name === version || e.version === version.replace(/^v/, ''),
    );
    if (entry === undefined)
      throw new UsageError(
        `--version: channel "${channel.name}" of package "${pkgName}" has no version "${version}" (versions: ${(channel.entries ?? []).map((e) => e.version ?? e.name).join(', ')})`,
      );
    startingCSV = entry.name;
  }
  const modes = channel.currentCSVDesc?.installModes ?? [];
  const ownNamespace =
    modes.length === 0 || modes.some((m) => m.type === 'OwnNamespace' && m.supported);
  const group = await operatorGroupFor(
    session,
    booleanFlag(args, 'create-operator-group'),
    ownNamespace,
    printer,
  );
  if (group !== undefined) printer.progress(`operatorgroup "${group}" created\n`);
  const created = await session.client.create({
    apiVersion: api.olm,
    kind: 'Subscription',
    metadata: { name: pkgName, namespace: session.namespace },
    spec: {
      name: pkgName,
      channel: channel.name,
      source: pkg.status.catalogSource,
      sourceNamespace: pkg.status.catalogSourceNamespace,
      installPlanApproval: approval,
      ...(startingCSV === undefined ? {} : { startingCSV }),
    },
  });
  printer.progress(`subscription "${pkgName}" created\n`);
  // kubectl operator's behaviour: a Manual install of a chosen version approves the plan that
  // installs exactly that version, and no other.
  if (approval === 'Manual' && startingCSV !== undefined) {
    const want = startingCSV;
    const plan = await pollUntil(printer, `an InstallPlan for ${want}`, timeoutMs, async () => {
      const sub = await getView(
        session.client,
        olmRef('Subscription', session.namespace, pkgName),
        subscriptionView,
      );
      const ref = sub?.status?.installPlanRef?.name;
      const ip =
        ref === undefined
          ? undefined
          : await getView(
              session.client,
              olmRef('InstallPlan', session.namespace, ref),
              installPlanView,
            );
      const matches = ip?.spec.clusterServiceVersionNames.includes(want) === true;
      return {
        done: matches,
        status:
          ip === undefined
            ? 'resolving'
            : `plan ${ip.metadata.name} installs ${ip.spec.clusterServiceVersionNames.join(', ')}`,
        ...(ip === undefined ? {} : { value: ip.metadata.name }),
      };
    });
    if (plan !== undefined) {
      await approve(session.client, session.namespace, plan);
      printer.progress(`installplan "${plan}" approved\n`);
    }
  }
  let result: unknown = created;
  if (booleanFlag(args, 'wait')) {
    const sub = await waitInstalled(session, pkgName, timeoutMs, printer, startingCSV);
    result = sub ?? created;
    const installed = sub?.status?.installedCSV;
    printer.progress(
      installed === undefined
        ? `the InstallPlan waits for approval; approve with: kubectl olmq upgrade ${pkgName} -n ${session.namespace}\n`
        : `operator "${pkgName}" installed: ${installed}\n`,
    );
  }
  printer.out(
    render(global.output, result, () => `subscription.operators.coreos.com/${pkgName} created\n`),
  );
}

/** `upgrade PACKAGE [--channel C]`: switch the channel and/or approve the pending plan. */
export async function upgrade(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const [pkgName] = operands(args, 1, ['PACKAGE']) as [string];
  const timeoutMs = durationFlag(args, 'timeout', defaultTimeoutMs);
  const ns = session.namespace;
  let sub = await findSubscription(session.client, ns, pkgName);
  const name = sub.metadata.name;
  const channel = stringFlag(args, 'channel');
  const done: string[] = [];
  if (channel !== undefined && channel !== sub.spec.channel) {
    await session.client.patch(olmRef('Subscription', ns, name), 'merge', { spec: { channel } });
    done.push(`subscription "${name}" switched to channel "${channel}"`);
  }
  // After a channel switch the next plan comes from a new resolution: wait for it to be planned.
  const previousPlan = channel === undefined ? undefined : sub.status?.installPlanRef?.name;
  const pending = await pollUntil(
    printer,
    `the pending InstallPlan of "${name}"`,
    channel === undefined ? 0 : timeoutMs,
    async () => {
      sub = await findSubscription(session.client, ns, name);
      const ref = sub.status?.installPlanRef?.name;
      const ip =
        ref === undefined
          ? undefined
          : await getView(session.client, olmRef('InstallPlan', ns, ref), installPlanView);
      const waiting = ip?.status?.phase === 'RequiresApproval' && ip.spec.approved !== true;
      const settled = ip !== undefined && ref !== previousPlan;
      return {
        done:
          waiting || settled || channel === undefined || sub.spec.installPlanApproval !== 'Manual',
        status: ip?.status?.phase ?? 'resolving',
        ...(waiting && ip !== undefined ? { value: ip } : {}),
      };
    },
  );
  if (pending !== undefined) {
    await approve(session.client, ns, pending.metadata.name);
    done.push(
      `installplan "${pending.metadata.name}" approved: ${pending.spec.clusterServiceVersionNames.join(', ')}`,
    );
  }
  if (done.length === 0) {
    const installed = sub.status?.installedCSV ?? '<none>';
    done.push(
      `no upgrade pending for "${name}": installed ${installed}, channel head as resolved ${sub.status?.currentCSV ?? '<none>'}`,
    );
  }
  for (const line of done) printer.progress(`${line}\n`);
  let result: unknown = sub;
  if (booleanFlag(args, 'wait') && (pending !== undefined || channel !== undefined)) {
    const want = pending?.spec.clusterServiceVersionNames.find(
      (c) => c !== sub.status?.installedCSV,
    );
    result = (await waitInstalled(session, name, timeoutMs, printer, want)) ?? sub;
  }
  printer.out(render(global.output, result, () => `${done.join('\n')}\n`));
}

/** `uninstall PACKAGE [--delete-crds] [--delete-operator-groups] [--delete-all]`. */
export async function uninstall(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const [pkgName] = operands(args, 1, ['PACKAGE']) as [string];
  const all = booleanFlag(args, 'delete-all');
  const deleteCrds = all || booleanFlag(args, 'delete-crds');
  const deleteGroups = all || booleanFlag(args, 'delete-operator-groups');
  const ns = session.namespace;
  const client = session.client;
  const sub = await findSubscription(client, ns, pkgName);
  const csvName = sub.status?.installedCSV ?? sub.status?.currentCSV;
  const csv =
    csvName === undefined
      ? undefined
      : await getView(client, olmRef('ClusterServiceVersion', ns, csvName), csvView);
  const deleted: { kind: string; name: string }[] = [];
  if (await client.delete(olmRef('Subscription', ns, sub.metadata.name)))
    deleted.push({ kind: 'subscription', name: sub.metadata.name });
  if (csv !== undefined) {
    // CRDs first, as kubectl operator does: their instances go with them while the operator that
    // may hold finalizers on them is still running.
    if (deleteCrds) {
      for (const crd of csv.spec.customresourcedefinitions?.owned ?? []) {
        if (
          await client.delete({
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            name: crd.name,
          })
        )
          deleted.push({ kind: 'customresourcedefinition', name: crd.name });
      }
    }
    if (await client.delete(olmRef('ClusterServiceVersion', ns, csv.metadata.name)))
      deleted.push({ kind: 'clusterserviceversion', name: csv.metadata.name });
  }
  if (deleteGroups) {
    const others = (
      await listView(
        client,
        { apiVersion: api.olm, kind: 'Subscription', namespace: ns },
        subscriptionView,
      )
    ).filter((s) => s.metadata.name !== sub.metadata.name);
    if (others.length === 0) {
      for (const og of await listView(
        client,
        { apiVersion: api.olmV1, kind: 'OperatorGroup', namespace: ns },
        operatorGroupView,
      )) {
        if (
          await client.delete({
            apiVersion: api.olmV1,
            kind: 'OperatorGroup',
            namespace: ns,
            name: og.metadata.name,
          })
        )
          deleted.push({ kind: 'operatorgroup', name: og.metadata.name });
      }
    } else {
      printer.progress(
        `operatorgroups kept: namespace "${ns}" has other Subscriptions (${others.map((s) => s.metadata.name).join(', ')})\n`,
      );
    }
  }
  printer.out(
    render(global.output, { deleted }, () =>
      deleted.map((d) => `${d.kind} "${d.name}" deleted\n`).join(''),
    ),
  );
}
