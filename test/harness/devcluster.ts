// Test fixture: an in-process devcluster on a random port, its kubeconfig in a temp dir, a
// kubectl runner and raw HTTPS requests.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import {
  startDevcluster,
  type Devcluster,
  type DevclusterOptions,
} from '../../devcluster/index.js';

/** A running devcluster with its temp dir and kubeconfig path. */
export interface ClusterFixture {
  cluster: Devcluster;
  dir: string;
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  close(): Promise<void>;
}

/** Starts a devcluster (pods ready at once unless told otherwise) and writes its kubeconfig. */
export async function startCluster(options: DevclusterOptions = {}): Promise<ClusterFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-devcluster-test-'));
  const cluster = await startDevcluster({ podReadyDelayMs: 0, ...options });
  const kubeconfigPath = join(dir, 'kubeconfig');
  await cluster.writeKubeconfig(kubeconfigPath);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(cluster.kubeconfig());
  return {
    cluster,
    dir,
    kubeconfigPath,
    kubeConfig,
    close: async () => {
      await cluster.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Why kubectl cannot be used, or undefined when it is on PATH. */
export function kubectlMissing(): string | undefined {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'kubectl is not on PATH: the kubectl suite needs the real binary';
  }
}

/** Outcome of one kubectl run. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the fixture (own discovery cache per cluster), with extra env vars if given. */
export function kubectl(
  fixture: ClusterFixture,
  args: readonly string[],
  input?: string,
  env: Readonly<Record<string, string>> = {},
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      [...args],
      {
        env: {
          ...process.env,
          KUBECONFIG: fixture.kubeconfigPath,
          KUBECACHEDIR: join(fixture.dir, 'cache'),
          HOME: fixture.dir,
          ...env,
        },
        timeout: 60_000,
        maxBuffer: 32 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** A raw HTTPS response from the devcluster. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends one raw HTTPS request as the admin (client certificate from the kubeconfig) or with no client certificate. */
export function rawRequest(
  fixture: ClusterFixture,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
  identity: 'admin' | 'none' = 'admin',
): Promise<RawResponse> {
  const cluster = fixture.kubeConfig.getCurrentCluster();
  const user = fixture.kubeConfig.getCurrentUser();
  const decode = (value: string | undefined): string =>
    Buffer.from(value ?? '', 'base64').toString('utf8');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${fixture.cluster.url}${path}`,
      {
        method,
        ca: decode(cluster?.caData),
        ...(identity === 'admin'
          ? { cert: decode(user?.certData), key: decode(user?.keyData) }
          : {}),
        headers: { 'Content-Type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Opens an HTTP/2 connection (ALPN h2, as kubectl and client-go negotiate it) as the admin or
 * with no client certificate; the caller closes it.
 */
export async function http2Session(
  fixture: ClusterFixture,
  identity: 'admin' | 'none' = 'admin',
): Promise<ClientHttp2Session> {
  const cluster = fixture.kubeConfig.getCurrentCluster();
  const user = fixture.kubeConfig.getCurrentUser();
  const decode = (value: string | undefined): string =>
    Buffer.from(value ?? '', 'base64').toString('utf8');
  const session = http2Connect(fixture.cluster.url, {
    ca: decode(cluster?.caData),
    ...(identity === 'admin' ? { cert: decode(user?.certData), key: decode(user?.keyData) } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    session.once('connect', () => resolve());
    session.once('error', reject);
  });
  return session;
}

/** Sends one request over an HTTP/2 session and reads the whole answer. */
export function http2Request(
  session: ClientHttp2Session,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string | string[]> = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': method,
      ':path': path,
      'content-type': 'application/json',
      ...headers,
    });
    let status = 0;
    let responseHeaders: RawResponse['headers'] = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      responseHeaders = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () =>
      resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks).toString('utf8') }),
    );
    stream.on('error', reject);
    stream.end(body);
  });
}

/** The test CRD of the devcluster suites (example.olmq.io Widget), parsed. */
export function widgetsCrd(): unknown {
  const file = join(
    import.meta.dirname,
    '..',
    '..',
    '..',
    'test',
    'fixtures',
    'devcluster',
    'widgets-crd.yaml',
  );
  return parse(readFileSync(file, 'utf8'));
}

/**
 * kubectl against the cluster of `kubeconfigPath` (e.g. one `olmq up` wrote), answering its
 * stdout and throwing with its stderr when it fails.
 */
export function kubectlAt(
  kubeconfigPath: string,
  dir: string,
): (args: readonly string[], input?: string) => Promise<string> {
  const fixture = { kubeconfigPath, dir } as ClusterFixture;
  return async (args, input) => {
    const r = await kubectl(fixture, args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
}
