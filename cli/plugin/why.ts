// `kubectl olmq why SUBSCRIPTION`: reads the chain Subscription → catalog → InstallPlan → CSV →
// Deployments (and their pods) and prints it in one screen, the first wrong link highlighted
// with its fix (./diagnosis.ts decides).
import type { KubeClient } from '../../shared/kube/client.js';
import { operands, type GlobalOptions, type ParsedArgs } from './args.js';
import { diagnose, type Diagnosis, type Link, type WhySnapshot } from './diagnosis.js';
import { render, styles, table, type Printer } from './output.js';
import { api, getView, listView, type Session } from './session.js';
import {
  catalogSourceView,
  csvView,
  deploymentView,
  installPlanView,
  NotFoundError,
  podView,
  subscriptionView,
  type SubscriptionView,
} from './types.js';

/** The Subscription named `name`, or else the one subscribing to package `name`. */
export async function findSubscription(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<SubscriptionView> {
  const ref = { apiVersion: api.olm, kind: 'Subscription', namespace };
  const byName = await getView(client, { ...ref, name }, subscriptionView);
  if (byName !== undefined) return byName;
  const byPackage = (await listView(client, ref, subscriptionView)).filter(
    (s) => s.spec.name === name,
  );
  if (byPackage[0] !== undefined) return byPackage[0];
  throw new NotFoundError(
    `subscriptions.operators.coreos.com "${name}" not found in namespace "${namespace}" (nor a Subscription to package "${name}")`,
  );
}

/** Reads everything `why` looks at. */
export async function whySnapshot(client: KubeClient, sub: SubscriptionView): Promise<WhySnapshot> {
  const ns = sub.metadata.namespace ?? 'default';
  const planName = sub.status?.installPlanRef?.name;
  const csvName = sub.status?.installedCSV ?? sub.status?.currentCSV;
  const [catalog, plan, csv] = await Promise.all([
    sub.spec.source === undefined
      ? undefined
      : getView(
          client,
          {
            apiVersion: api.olm,
            kind: 'CatalogSource',
            namespace: sub.spec.sourceNamespace ?? ns,
            name: sub.spec.source,
          },
          catalogSourceView,
        ),
    planName === undefined
      ? undefined
      : getView(
          client,
          { apiVersion: api.olm, kind: 'InstallPlan', namespace: ns, name: planName },
          installPlanView,
        ),
    csvName === undefined
      ? undefined
      : getView(
          client,
          { apiVersion: api.olm, kind: 'ClusterServiceVersion', namespace: ns, name: csvName },
          csvView,
        ),
  ]);
  const names = csv?.spec.install?.spec?.deployments?.map((d) => d.name) ?? [];
  const deployments = await Promise.all(
    names.map(async (name) => {
      const deployment = await getView(
        client,
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name },
        deploymentView,
      );
      const labels = deployment?.spec?.selector?.matchLabels;
      const selector =
        labels === undefined
          ? undefined
          : Object.entries(labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(',');
      const pods =
        selector === undefined || selector === ''
          ? []
          : await listView(
              client,
              { apiVersion: 'v1', kind: 'Pod', namespace: ns },
              podView,
              selector,
            );
      return { name, deployment, pods };
    }),
  );
  return { subscription: sub, catalog, plan, csv, deployments };
}

/** The one-screen text of a diagnosis. */
export function whyText(sub: SubscriptionView, diagnosis: Diagnosis, colour: boolean): string {
  const s = styles(colour);
  const mark = (link: Link) =>
    link.status === 'FAILED'
      ? s.red(link.status)
      : link.status === 'OK'
        ? s.green(link.status)
        : s.yellow(link.status);
  const firstFailed = diagnosis.links.findIndex((l) => l.status === 'FAILED');
  // A blank (not `<none>`) marker cell for the links that are not the cause.
  const rows = diagnosis.links.map((l, i) => [
    i === firstFailed ? '=>' : ' ',
    l.stage,
    l.object,
    l.status,
    l.detail,
  ]);
  // Colour after layout: escape codes would upset the column widths.
  const text = table(['', 'stage', 'object', 'status', 'detail'], rows)
    .split('\n')
    .map((line, i) => {
      const link = diagnosis.links[i - 1];
      if (link === undefined) return line;
      const colored = line.replace(` ${link.status} `, ` ${mark(link)} `);
      return i - 1 === firstFailed ? s.bold(colored) : colored;
    })
    .join('\n');
  const lines = [
    `Subscription ${sub.metadata.namespace ?? ''}/${sub.metadata.name}: ${diagnosis.summary}`,
    '',
    text.trimEnd(),
    '',
  ];
  if (diagnosis.finding !== undefined) {
    lines.push(
      `${s.red(s.bold('Cause:'))} ${diagnosis.finding.cause}: ${diagnosis.finding.message}`,
    );
    diagnosis.finding.fix.forEach((f, i) =>
      lines.push(`${i === 0 ? s.bold('Fix:  ') : '      '} ${f}`),
    );
  } else if (diagnosis.summary === 'Installed') {
    lines.push(
      `Nothing is wrong: ${sub.status?.installedCSV ?? ''} is installed and its Deployments are available.`,
    );
  } else {
    lines.push(
      'Nothing is wrong yet: the Subscription is still progressing (run again to follow it).',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `why SUBSCRIPTION`. */
export async function why(
  session: Session,
  args: ParsedArgs,
  global: GlobalOptions,
  printer: Printer,
): Promise<void> {
  const [name] = operands(args, 1, ['SUBSCRIPTION']) as [string];
  const sub = await findSubscription(session.client, session.namespace, name);
  const diagnosis = diagnose(await whySnapshot(session.client, sub));
  printer.out(
    render(
      global.output,
      { subscription: sub.metadata.name, namespace: sub.metadata.namespace, ...diagnosis },
      () => whyText(sub, diagnosis, printer.colour),
    ),
  );
}
