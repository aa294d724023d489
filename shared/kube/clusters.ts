// Which clusters a process serves, from kubeconfig files. One pool of function replicas can
// serve a fleet: every context of a kubeconfig file, or every file of a directory, is a
// cluster, named by its context (file: by its name without extension).
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';

/** One cluster and how to reach it. */
export interface ClusterAccess {
  /** The cluster id carried by every message and metric. */
  id: string;
  /** A kubeconfig whose current context is this cluster. */
  kubeConfig: KubeConfig;
}

/** A kubeconfig cannot be used; says which file and why. */
export class KubeconfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KubeconfigError';
  }
}

/** One kubeconfig file of a cluster directory, with a digest of its content (to see changes). */
export interface ClusterFile {
  /** The cluster id: the file's name without extension. */
  id: string;
  file: string;
  digest: string;
}

/**
 * The kubeconfig files of directory `dir`, sorted: every regular file (symlinks followed, as a
 * mounted Secret's are) whose name does not start with a dot.
 */
export function clusterFilesOf(dir: string): ClusterFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    throw new KubeconfigError(`kubeconfig directory ${dir} cannot be read`, { cause: error });
  }
  const files: ClusterFile[] = [];
  for (const name of names.filter((n) => !n.startsWith('.')).sort()) {
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      const digest = createHash('sha256').update(readFileSync(file)).digest('hex');
      files.push({ id: basename(name, extname(name)), file, digest });
    } catch {
      continue; // removed between the listing and the read: gone at the next look
    }
  }
  return files;
}

/** The kubeconfig of one cluster file (its current context). */
export function loadClusterFile(file: string): KubeConfig {
  return load(file);
}

function load(file: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(file);
  } catch (error) {
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  followTokenFiles(kubeConfig, file);
  return kubeConfig;
}

/**
 * client-node reads a user's `token-file` once, when the kubeconfig is loaded; a projected
 * token is rotated in place. Such users get the in-cluster form (a tokenFile auth provider)
 * instead, which our credentials (./credentials.ts) re-read when the file changes.
 */
function followTokenFiles(kubeConfig: KubeConfig, file: string): void {
  let raw: { users?: { name?: unknown; user?: { 'token-file'?: unknown } | null }[] } | null;
  try {
    raw = parseYaml(readFileSync(file, 'utf8')) as typeof raw;
  } catch {
    return; // client-node read it: a kubeconfig in JSON, say; nothing to follow
  }
  for (const entry of raw?.users ?? []) {
    const tokenFile = entry.user?.['token-file'];
    if (typeof entry.name !== 'string' || typeof tokenFile !== 'string') continue;
    const path = isAbsolute(tokenFile) ? tokenFile : join(dirname(file), tokenFile);
    kubeConfig.users = kubeConfig.users.map((user) => {
      if (user.name !== entry.name || user.exec !== undefined) return user;
      const { token: _read, ...rest } = user;
      return { ...rest, authProvider: { name: 'tokenFile', config: { tokenFile: path } } };
    });
  }
}

function withContext(file: string, context: string): KubeConfig {
  const kubeConfig = load(file);
  if (!kubeConfig.getContexts().some((c) => c.name === context)) {
    const known =
      kubeConfig
        .getContexts()
        .map((c) => c.name)
        .join(', ') || 'none';
    throw new KubeconfigError(
      `kubeconfig ${file} has no context "${context}" (contexts: ${known})`,
    );
  }
  kubeConfig.setCurrentContext(context);
  return kubeConfig;
}

/**
 * The clusters to serve. `path` is a kubeconfig file (every context, or only `context`) or a
 * directory of kubeconfig files (each file's current context, named after the file); absent,
 * the in-cluster service account (named `clusterId`, default "in-cluster").
 */
export function loadClusters(options: {
  path?: string | undefined;
  context?: string | undefined;
  clusterId?: string | undefined;
}): ClusterAccess[] {
  const { path, context, clusterId } = options;
  if (path === undefined) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromCluster();
    return [{ id: clusterId ?? 'in-cluster', kubeConfig }];
  }
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    throw new KubeconfigError(`kubeconfig ${path} does not exist`, { cause: error });
  }
  if (isDirectory) {
    const files = readdirSync(path)
      .filter((f) => !f.startsWith('.') && statSync(join(path, f)).isFile())
      .sort();
    if (files.length === 0)
      throw new KubeconfigError(`kubeconfig directory ${path} holds no files`);
    return files.map((f) => ({ id: basename(f, extname(f)), kubeConfig: load(join(path, f)) }));
  }
  if (context !== undefined)
    return [{ id: clusterId ?? context, kubeConfig: withContext(path, context) }];
  const contexts = load(path).getContexts();
  if (contexts.length === 0) throw new KubeconfigError(`kubeconfig ${path} has no contexts`);
  if (clusterId !== undefined && contexts.length > 1) {
    throw new KubeconfigError(
      `--cluster names one cluster, but kubeconfig ${path} has ${contexts.length} contexts; pass --context too`,
    );
  }
  return contexts.map((c) => ({ id: clusterId ?? c.name, kubeConfig: withContext(path, c.name) }));
}
