// Upstream's checks of what a CSV asks for: webhook descriptions, install modes against the
// OperatorGroup's targets, and the deployments webhooks and APIServices name. Pure.
import type { Csv, Transition } from '../csv-status.js';
import type { Strategy } from './strategy.js';

/** Upstream's webhook description checks: the message of the first problem, or undefined. */
export function webhookProblem(csv: Csv): string | undefined {
  const hooks = csv.spec?.webhookdefinitions ?? [];
  const names = new Set<string>();
  for (const hook of hooks) {
    if (names.has(hook.generateName ?? '')) return 'CSV contains repeated WebhookDescription name';
    names.add(hook.generateName ?? '');
    for (const rule of hook.rules ?? []) {
      const groups = rule.apiGroups ?? [];
      if (groups.includes('*')) return 'webhook rules cannot include all groups';
      if (groups.includes('operators.coreos.com'))
        return 'webhook rules cannot include the OLM group';
      if (
        groups.includes('admissionregistration.k8s.io') &&
        (rule.resources ?? []).some((r) =>
          [
            '*',
            'MutatingWebhookConfiguration',
            'ValidatingWebhookConfiguration',
            'mutatingwebhookconfigurations',
            'validatingwebhookconfigurations',
          ].includes(r),
        )
      ) {
        return 'webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources';
      }
    }
  }
  return undefined;
}

/** Upstream's install-mode check for an OperatorGroup's targets; the failure, or undefined. */
export function installModeProblem(csv: Csv, targets: readonly string[]): Transition | undefined {
  const modes = csv.spec?.installModes ?? [];
  const seen = new Set<string>();
  for (const m of modes) {
    if (seen.has(m.type)) {
      return {
        phase: 'Failed',
        reason: 'InvalidInstallModes',
        message: `detected duplicate install mode types: ${m.type}`,
      };
    }
    seen.add(m.type);
  }
  const supports = (type: string): boolean => modes.some((m) => m.type === type && m.supported);
  const own = csv.metadata.namespace ?? '';
  const fail = (mode: string, what: string): Transition => ({
    phase: 'Failed',
    reason: 'UnsupportedOperatorGroup',
    message: `${mode} InstallModeType not supported, cannot configure to watch ${what}`,
  });
  if (targets.length === 0) {
    return {
      phase: 'Failed',
      reason: 'UnsupportedOperatorGroup',
      message:
        'operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces',
    };
  }
  if (targets.length === 1) {
    const [only] = targets;
    if (only === own)
      return supports('OwnNamespace') ? undefined : fail('OwnNamespace', 'own namespace');
    if (only === '')
      return supports('AllNamespaces') ? undefined : fail('AllNamespaces', 'all namespaces');
    return supports('SingleNamespace') ? undefined : fail('SingleNamespace', 'one namespace');
  }
  if (targets.includes('')) {
    return {
      phase: 'Failed',
      reason: 'UnsupportedOperatorGroup',
      message:
        'operatorgroup has invalid selected namespaces, cannot configure to watch all namespaces and others',
    };
  }
  if (!supports('MultiNamespace')) return fail('MultiNamespace', `${targets.length} namespaces`);
  if (targets.includes(own) && !supports('OwnNamespace'))
    return fail('OwnNamespace', 'own namespace');
  return undefined;
}

/** A webhook or owned APIService naming a deployment the strategy does not define. */
export function deploymentNameProblem(csv: Csv, strategy: Strategy): string | undefined {
  const names = new Set(strategy.deployments.map((d) => d.name));
  for (const hook of csv.spec?.webhookdefinitions ?? []) {
    if (!names.has(hook.deploymentName ?? '')) {
      return `webhook ${hook.generateName ?? ''} names deployment "${hook.deploymentName ?? ''}", which the install strategy does not define`;
    }
  }
  for (const api of csv.spec?.apiservicedefinitions?.owned ?? []) {
    if (!names.has(api.deploymentName ?? '')) {
      return `APIService ${api.version ?? ''}.${api.group ?? ''} names deployment "${api.deploymentName ?? ''}", which the install strategy does not define`;
    }
  }
  return undefined;
}
