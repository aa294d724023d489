// The kubectl workflow suites' runner: each kubectl on the image against a devcluster of its
// own reporting that kubectl's minor version, and small kubectl helpers.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { kubectl, kubectlMissing, startCluster, type ClusterFixture } from './devcluster.js';
import { kubectlMinors } from './kubectl-versions.js';

/**
 * Runs `body` once per kubectl on the image, each against a cluster of its own reporting that
 * minor version (closed after the test); fails loudly when kubectl is missing.
 */
export function forEachKubectl(
  title: (minor: number) => string,
  body: (t: Test, fixture: ClusterFixture, minor: number) => Promise<void>,
): void {
  const missing = kubectlMissing();
  const minors = kubectlMinors();
  if (missing !== undefined) t.fail(missing);
  else if (minors.length === 0) t.fail('no kubectl.1.N binaries beside kubectl on PATH');
  for (const minor of minors) {
    void t.test(title(minor), async (t) => {
      const fixture = await startCluster({ kubernetesVersion: `v1.${minor}.0` });
      t.teardown(() => fixture.close());
      // The dispatcher answers for its own minor itself, and runs kubectl.1.N for the others.
      const version = JSON.parse(await kubectlOk(fixture, ['version', '-o', 'json'])) as {
        clientVersion: { minor: string };
      };
      t.equal(Number.parseInt(version.clientVersion.minor, 10), minor, `kubectl 1.${minor} runs`);
      await body(t, fixture, minor);
    });
  }
}

/** Runs kubectl and returns its stdout; throws with its stderr when it fails. */
export async function kubectlOk(
  fixture: ClusterFixture,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<string> {
  const result = await kubectl(fixture, args, undefined, env);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** `kubectl get <args> -o json` with managedFields, parsed. */
export async function kubectlGet<T = Record<string, unknown>>(
  fixture: ClusterFixture,
  args: readonly string[],
): Promise<T> {
  return JSON.parse(
    await kubectlOk(fixture, ['get', ...args, '-o', 'json', '--show-managed-fields']),
  ) as T;
}

/**
 * An executable editor for `kubectl edit` (KUBE_EDITOR) that runs `sed -i` with `expression`
 * on the file kubectl hands it; returns the env that selects it.
 */
export function sedEditor(
  fixture: ClusterFixture,
  name: string,
  expression: string,
): Record<string, string> {
  const path = join(fixture.dir, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\nexec sed -i -e '${expression.replaceAll("'", `'\\''`)}' "$1"\n`);
  chmodSync(path, 0o755);
  return { KUBE_EDITOR: path, EDITOR: path };
}
