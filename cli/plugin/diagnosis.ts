// The pure half of `kubectl olmq why`: from a snapshot of the chain Subscription → catalog →
// resolution → InstallPlan → CSV → Deployments, each link's state and the first thing that is
// wrong, with the command that fixes it. No I/O here (./why.ts loads and prints).
import type {
  CatalogSourceView,
  CsvView,
  DeploymentView,
  InstallPlanView,
  PodView,
  SubscriptionView,
} from './types.js';

/** Stable codes of what `why` finds (printed, and in `-o json`). */
export const WhyCause = {
  CatalogMissing: 'CatalogMissing',
  CatalogUnhealthy: 'CatalogUnhealthy',
  ResolutionFailed: 'ResolutionFailed',
  BundleUnpackFailed: 'BundleUnpackFailed',
  ApprovalRequired: 'ApprovalRequired',
  InstallPlanFailed: 'InstallPlanFailed',
  RequirementsNotMet: 'RequirementsNotMet',
  CsvFailed: 'CsvFailed',
  DeploymentUnavailable: 'DeploymentUnavailable',
} as const;
export type WhyCause = (typeof WhyCause)[keyof typeof WhyCause];

/** How one link of the chain stands. */
export type LinkStatus = 'OK' | 'PENDING' | 'FAILED' | 'NOT REACHED';

/** One link of the chain as printed. */
export interface Link {
  stage: 'Subscription' | 'Catalog' | 'Resolution' | 'InstallPlan' | 'CSV' | 'Deployment';
  object: string;
  status: LinkStatus;
  detail: string;
}

/** The first thing wrong, and how to fix it. */
export interface Finding {
  cause: WhyCause;
  message: string;
  fix: string[];
}

/** What `why` read of the cluster. */
export interface WhySnapshot {
  subscription: SubscriptionView;
  /** The Subscription's CatalogSource, undefined when it does not exist. */
  catalog: CatalogSourceView | undefined;
  plan: InstallPlanView | undefined;
  csv: CsvView | undefined;
  deployments: { name: string; deployment: DeploymentView | undefined; pods: PodView[] }[];
}

/** The verdict: every link, and the first cause (undefined: healthy or still progressing). */
export interface Diagnosis {
  links: Link[];
  finding: Finding | undefined;
  /** "Installed", "Progressing" or "Broken". */
  summary: 'Installed' | 'Progressing' | 'Broken';
}

type Condition = {
  type: string;
  status?: string | undefined;
  reason?: string | undefined;
  message?: string | undefined;
};

function conditionOf(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type && c.status === 'True');
}

function catalogLink(
  snap: WhySnapshot,
  ns: string,
  pkg: string,
): { link: Link; finding?: Finding } {
  const sub = snap.subscription;
  const name = `${sub.spec.sourceNamespace ?? ns}/${sub.spec.source ?? ''}`;
  if (snap.catalog === undefined) {
    return {
      link: { stage: 'Catalog', object: name, status: 'FAILED', detail: 'CatalogSource not found' },
      finding: {
        cause: WhyCause.CatalogMissing,
        message: `the Subscription's catalog ${name} does not exist`,
        fix: [
          `add it: kubectl olmq catalog add ${sub.spec.source ?? 'NAME'} ADDRESS_OR_IMAGE -n ${sub.spec.sourceNamespace ?? ns}`,
          `or see the catalogs there are: kubectl olmq catalog list -A`,
        ],
      },
    };
  }
  const state = snap.catalog.status?.connectionState?.lastObservedState ?? '';
  const unhealthyCondition = conditionOf(sub.status?.conditions, 'CatalogSourcesUnhealthy');
  const ownHealth = sub.status?.catalogHealth?.find(
    (h) =>
      h.catalogSourceRef.name === sub.spec.source &&
      h.catalogSourceRef.namespace === (sub.spec.sourceNamespace ?? ns),
  );
  const unhealthy = (state !== '' && state !== 'READY') || ownHealth?.healthy === false;
  if (!unhealthy) {
    const detail = state === '' ? 'no connection state yet' : state;
    return {
      link: {
        stage: 'Catalog',
        object: name,
        status: state === 'READY' ? 'OK' : 'PENDING',
        detail,
      },
    };
  }
  const where =
    snap.catalog.spec.address ??
    snap.catalog.spec.image ??
    snap.catalog.status?.connectionState?.address ??
    '';
  const why = snap.catalog.status?.message ?? unhealthyCondition?.message ?? '';
  return {
    link: {
      stage: 'Catalog',
      object: name,
      status: 'FAILED',
      detail: `${state || 'unhealthy'}${why ? `: ${why}` : ''}`,
    },
    finding: {
      cause: WhyCause.CatalogUnhealthy,
      message: `catalog ${name} is unhealthy (${state || 'not healthy'})${where ? `: its registry ${where} does not answer` : ''}; package ${pkg} cannot be resolved from it`,
      fix: [
        `check the registry is up and reachable: kubectl get catalogsource ${snap.catalog.metadata.name} -n ${snap.catalog.metadata.namespace ?? ns} -o yaml`,
        `or point the catalog elsewhere: kubectl olmq catalog remove ${snap.catalog.metadata.name} -n ${snap.catalog.metadata.namespace ?? ns} && kubectl olmq catalog add ${snap.catalog.metadata.name} ADDRESS_OR_IMAGE -n ${snap.catalog.metadata.namespace ?? ns}`,
      ],
    },
  };
}

function resolutionLink(
  snap: WhySnapshot,
  ns: string,
  pkg: string,
): { link: Link; finding?: Finding } {
  const sub = snap.subscription;
  const conditions = sub.status?.conditions;
  const failed = conditionOf(conditions, 'ResolutionFailed');
  if (failed !== undefined) {
    return {
      link: {
        stage: 'Resolution',
        object: pkg,
        status: 'FAILED',
        detail: failed.reason ?? 'ResolutionFailed',
      },
      finding: {
        cause: WhyCause.ResolutionFailed,
        message: `the constraints cannot be satisfied: ${failed.message ?? failed.reason ?? 'no reason given'}`,
        fix: [
          `see what the catalogs offer: kubectl olmq list-available -n ${ns}; install what provides the missing API first`,
          `preview another channel: kubectl olmq preview ${sub.metadata.name} -n ${ns} --channel CHANNEL`,
        ],
      },
    };
  }
  const unpackFailed = conditionOf(conditions, 'BundleUnpackFailed');
  if (unpackFailed !== undefined) {
    return {
      link: {
        stage: 'Resolution',
        object: pkg,
        status: 'FAILED',
        detail: `BundleUnpackFailed: ${unpackFailed.message ?? ''}`,
      },
      finding: {
        cause: WhyCause.BundleUnpackFailed,
        message: `the bundle could not be unpacked: ${unpackFailed.message ?? unpackFailed.reason ?? ''}`,
        fix: [
          `check the bundle image can be pulled; then delete the InstallPlan to unpack again: kubectl delete installplan ${sub.status?.installPlanRef?.name ?? 'NAME'} -n ${ns}`,
        ],
      },
    };
  }
  if (conditionOf(conditions, 'BundleUnpacking') !== undefined)
    return {
      link: { stage: 'Resolution', object: pkg, status: 'PENDING', detail: 'BundleUnpacking' },
    };
  const target = sub.status?.currentCSV;
  if (target === undefined)
    return {
      link: { stage: 'Resolution', object: pkg, status: 'PENDING', detail: 'not resolved yet' },
    };
  return {
    link: { stage: 'Resolution', object: pkg, status: 'OK', detail: `resolved to ${target}` },
  };
}

function planLink(snap: WhySnapshot, ns: string, pkg: string): { link: Link; finding?: Finding } {
  const plan = snap.plan;
  const ref = snap.subscription.status?.installPlanRef?.name;
  if (plan === undefined) {
    const status: LinkStatus =
      snap.subscription.status?.installedCSV !== undefined ? 'OK' : 'PENDING';
    return {
      link: {
        stage: 'InstallPlan',
        object: ref ?? '',
        status,
        detail: ref === undefined ? 'no plan yet' : 'not found',
      },
    };
  }
  const name = plan.metadata.name;
  const phase = plan.status?.phase ?? '';
  const csvs = plan.spec.clusterServiceVersionNames.join(', ');
  if (phase === 'RequiresApproval' && plan.spec.approved !== true) {
    return {
      link: {
        stage: 'InstallPlan',
        object: name,
        status: 'FAILED',
        detail: `RequiresApproval (approval ${plan.spec.approval ?? 'Manual'}, not approved): ${csvs}`,
      },
      finding: {
        cause: WhyCause.ApprovalRequired,
        message: `InstallPlan ${name} waits for manual approval to install ${csvs}`,
        fix: [
          `approve with: kubectl olmq upgrade ${pkg} -n ${ns}`,
          `or: kubectl patch installplan ${name} -n ${ns} --type merge -p '{"spec":{"approved":true}}'`,
        ],
      },
    };
  }
  if (phase === 'Failed') {
    const step = plan.status?.plan?.find((s) => s.status === 'Failed');
    const installed = plan.status?.conditions?.find((c) => c.type === 'Installed');
    const what =
      step?.resource === undefined ? '' : `step ${step.resource.kind} ${step.resource.name}: `;
    const why = installed?.message ?? step?.message ?? plan.status?.message ?? 'no message';
    return {
      link: {
        stage: 'InstallPlan',
        object: name,
        status: 'FAILED',
        detail: `Failed: ${what}${why}`,
      },
      finding: {
        cause: WhyCause.InstallPlanFailed,
        message: `InstallPlan ${name} failed: ${what}${why}`,
        fix: [
          `the bundle holds an object the API server refuses; see: kubectl get installplan ${name} -n ${ns} -o yaml`,
          `once the catalog serves a fixed bundle, plan again: kubectl delete installplan ${name} -n ${ns}`,
        ],
      },
    };
  }
  return {
    link: {
      stage: 'InstallPlan',
      object: name,
      status: phase === 'Complete' ? 'OK' : 'PENDING',
      detail: `${phase || 'no phase yet'}: ${csvs}`,
    },
  };
}

function deploymentLinks(snap: WhySnapshot, ns: string): { links: Link[]; finding?: Finding } {
  const links: Link[] = [];
  let finding: Finding | undefined;
  for (const { name, deployment, pods } of snap.deployments) {
    if (deployment === undefined) {
      links.push({
        stage: 'Deployment',
        object: name,
        status: 'PENDING',
        detail: 'not created yet',
      });
      continue;
    }
    const want = deployment.spec?.replicas ?? 1;
    const available = deployment.status?.availableReplicas ?? 0;
    const availableCondition = deployment.status?.conditions?.find((c) => c.type === 'Available');
    const ok = availableCondition?.status === 'True' && available >= Math.min(want, 1);
    const notReady = pods
      .filter((p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True')
      .map((p) => {
        const waiting = p.status?.containerStatuses
          ?.map((c) => Object.values(c.state ?? {})[0]?.reason)
          .find((r) => r !== undefined && r !== '');
        return `${p.metadata.name} ${p.status?.phase ?? ''}${waiting ? ` (${waiting})` : ''}, not ready`;
      });
    const detail = `${available}/${want} available${availableCondition?.reason ? ` (${availableCondition.reason})` : ''}${notReady.length > 0 ? `; pods: ${notReady.join('; ')}` : ''}`;
    links.push({ stage: 'Deployment', object: name, status: ok ? 'OK' : 'FAILED', detail });
    if (!ok && finding === undefined) {
      finding = {
        cause: WhyCause.DeploymentUnavailable,
        message: `Deployment ${name} does not become available: ${detail}`,
        fix: [
          `see why its pods are not ready: kubectl describe deployment ${name} -n ${ns}`,
          `and its logs: kubectl logs deployment/${name} -n ${ns}`,
        ],
      };
    }
  }
  return finding === undefined ? { links } : { links, finding };
}

function csvLink(snap: WhySnapshot, ns: string): { link: Link; finding?: Finding } {
  const csv = snap.csv;
  const expected =
    snap.subscription.status?.installedCSV ?? snap.subscription.status?.currentCSV ?? '';
  if (csv === undefined)
    return {
      link: { stage: 'CSV', object: expected, status: 'PENDING', detail: 'not created yet' },
    };
  const phase = csv.status?.phase ?? '';
  const reason = csv.status?.reason ?? '';
  const detail = `${phase || 'no phase yet'}${reason ? ` (${reason})` : ''}${csv.status?.message ? `: ${csv.status.message}` : ''}`;
  const link: Link = {
    stage: 'CSV',
    object: csv.metadata.name,
    status: phase === 'Succeeded' ? 'OK' : 'PENDING',
    detail,
  };
  const unmet = (csv.status?.requirementStatus ?? []).filter((r) => r.status !== 'Present');
  if (reason === 'RequirementsNotMet' || (phase === 'Pending' && unmet.length > 0)) {
    link.status = 'FAILED';
    return {
      link,
      finding: {
        cause: WhyCause.RequirementsNotMet,
        message: `CSV ${csv.metadata.name} waits for requirements: ${unmet.map((r) => `${r.kind ?? ''} ${r.name ?? ''} ${r.status ?? ''}${r.message ? ` (${r.message})` : ''}`).join('; ') || csv.status?.message || reason}`,
        fix: [
          `see: kubectl get csv ${csv.metadata.name} -n ${ns} -o jsonpath='{.status.requirementStatus}'`,
        ],
      },
    };
  }
  if (phase === 'Failed') {
    link.status = 'FAILED';
    return {
      link,
      finding: {
        cause: WhyCause.CsvFailed,
        message: `CSV ${csv.metadata.name} failed: ${reason}${csv.status?.message ? `: ${csv.status.message}` : ''}`,
        fix: [`see: kubectl describe csv ${csv.metadata.name} -n ${ns}`],
      },
    };
  }
  return { link };
}

/** Diagnoses the chain; the first failing link in chain order is the cause. */
export function diagnose(snap: WhySnapshot): Diagnosis {
  const sub = snap.subscription;
  const ns = sub.metadata.namespace ?? 'default';
  const pkg = sub.spec.name;
  const links: Link[] = [
    {
      stage: 'Subscription',
      object: sub.metadata.name,
      status: 'OK',
      detail: `package ${pkg}, channel ${sub.spec.channel ?? '<default>'}, approval ${sub.spec.installPlanApproval ?? 'Automatic'}${sub.status?.state ? `, state ${sub.status.state}` : ''}`,
    },
  ];
  const steps = [
    catalogLink(snap, ns, pkg),
    resolutionLink(snap, ns, pkg),
    planLink(snap, ns, pkg),
  ];
  const csv = csvLink(snap, ns);
  const deployments = deploymentLinks(snap, ns);
  links.push(...steps.map((s) => s.link), csv.link, ...deployments.links);
  // A CSV failing its install check is the symptom when a Deployment is unavailable: name the
  // Deployment, the cause the user can act on.
  const csvFinding =
    csv.finding?.cause === WhyCause.CsvFailed && deployments.finding !== undefined
      ? deployments.finding
      : csv.finding;
  const installed = snap.csv?.status?.phase === 'Succeeded' && deployments.finding === undefined;
  // An installed operator with a healthy chain is not broken by a catalog that went away later,
  // but the catalog is still reported: upgrades need it.
  const finding = [...steps.map((s) => s.finding), csvFinding, deployments.finding].find(
    (f) => f !== undefined,
  );
  let seenFailure = false;
  for (const link of links) {
    if (seenFailure && link.status === 'PENDING') link.status = 'NOT REACHED';
    if (link.status === 'FAILED') seenFailure = true;
  }
  return {
    links,
    finding,
    summary: finding !== undefined ? 'Broken' : installed ? 'Installed' : 'Progressing',
  };
}
