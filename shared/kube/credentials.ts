// Where a client's credentials come from, kept fresh: a token file re-read when it changes
// (projected ServiceAccount tokens are rotated in place), an exec plugin re-run before its
// credential expires, client certificate files reloaded when they change. After a 401 the
// client asks for a refresh and retries once, so a rotation between two checks costs nothing.
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { KubeConfig, type User } from '@kubernetes/client-node';

/** What one request authenticates with. */
export interface AuthMaterial {
  /** The Authorization header value, if any. */
  authorization?: string | undefined;
  /** Client certificate and key (PEM), if any. */
  cert?: string | undefined;
  key?: string | undefined;
}

/** A source of credentials for a client's requests. */
export interface Credentials {
  /** The material for the next request (cheap: file checks are throttled, exec results cached). */
  current(): Promise<AuthMaterial>;
  /** After a 401: reads everything again; true when the material changed (a retry may help). */
  refresh(): Promise<boolean>;
}

/** A credential source cannot produce credentials (bad exec plugin output, unreadable file). */
export class CredentialError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CredentialError';
  }
}

/** Credentials that never change (explicit token or certificate data). */
export function fixedCredentials(material: AuthMaterial): Credentials {
  return { current: () => Promise.resolve(material), refresh: () => Promise.resolve(false) };
}

/** Tunables of refreshing credentials. */
export interface CredentialOptions {
  /** Files are checked for changes at most this often. */
  fileCheckMs: number;
  /** An exec credential is renewed once this fraction of its lifetime has passed. */
  execRenewAt: number;
  /** The clock (ms since the epoch). */
  now: () => number;
}

const defaultCredentialOptions: CredentialOptions = {
  fileCheckMs: 1_000,
  execRenewAt: 0.8,
  now: Date.now,
};

/** A file read again when its identity, size or modification time changes. */
class WatchedFile {
  private text: string | undefined;
  private signature = '';
  private checkedAt = -Infinity;

  constructor(
    readonly path: string,
    private readonly options: CredentialOptions,
  ) {}

  /** The content; checked against the file at most every fileCheckMs unless `force`. */
  async read(force = false): Promise<string> {
    const now = this.options.now();
    if (!force && this.text !== undefined && now - this.checkedAt < this.options.fileCheckMs)
      return this.text;
    this.checkedAt = now;
    try {
      const info = await stat(this.path);
      const signature = `${info.ino}:${info.size}:${info.mtimeMs}`;
      if (force || this.text === undefined || signature !== this.signature) {
        this.text = await readFile(this.path, 'utf8');
        this.signature = signature;
      }
    } catch (error) {
      // A projected volume swaps files under us: keep the last good content if we have one.
      if (this.text !== undefined) return this.text;
      throw new CredentialError(`cannot read ${this.path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return this.text;
  }
}

/** The ExecCredential a client-go exec plugin prints. */
interface ExecCredential {
  status?: {
    token?: string;
    clientCertificateData?: string;
    clientKeyData?: string;
    expirationTimestamp?: string;
  };
}

interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion?: string;
}

/** Runs an exec plugin, as client-go does, and caches its credential until it nears expiry. */
class ExecPlugin {
  private cached: { material: AuthMaterial; renewAt: number } | undefined;
  private running: Promise<AuthMaterial> | undefined;

  constructor(
    private readonly exec: ExecConfig,
    private readonly options: CredentialOptions,
  ) {}

  async current(force = false): Promise<AuthMaterial> {
    const cached = this.cached;
    if (!force && cached !== undefined && this.options.now() < cached.renewAt)
      return cached.material;
    this.running ??= this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async run(): Promise<AuthMaterial> {
    const started = this.options.now();
    const output = await runPlugin(this.exec);
    let credential: ExecCredential;
    try {
      credential = JSON.parse(output) as ExecCredential;
    } catch (error) {
      throw new CredentialError(`exec plugin ${this.exec.command} printed no ExecCredential`, {
        cause: error,
      });
    }
    const status = credential.status ?? {};
    const material: AuthMaterial = {
      authorization: status.token === undefined ? undefined : `Bearer ${status.token}`,
      cert: status.clientCertificateData,
      key: status.clientKeyData,
    };
    const expires =
      status.expirationTimestamp === undefined ? NaN : Date.parse(status.expirationTimestamp);
    // Without an expiry the credential is kept until a 401 says otherwise.
    const renewAt = Number.isNaN(expires)
      ? Infinity
      : started + (expires - started) * this.options.execRenewAt;
    this.cached = { material, renewAt };
    return material;
  }
}

function runPlugin(exec: ExecConfig): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const { name, value } of exec.env ?? []) env[name] = value;
  env['KUBERNETES_EXEC_INFO'] = JSON.stringify({
    apiVersion: exec.apiVersion ?? 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    spec: { interactive: false },
  });
  return new Promise((resolve, reject) => {
    const child = spawn(exec.command, exec.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (error) =>
      reject(
        new CredentialError(`exec plugin ${exec.command}: ${error.message}`, { cause: error }),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new CredentialError(
            `exec plugin ${exec.command} exited ${code ?? 'on a signal'}: ${stderr.trim().slice(0, 300)}`,
          ),
        );
    });
  });
}

/**
 * The credentials of a kubeconfig's current user: exec plugin, token file (in-cluster, or
 * `token-file`; see clusters.ts), static token, other auth providers through client-node, and
 * client certificate files. Certificate data given inline never changes.
 */
export function kubeConfigCredentials(
  kubeConfig: KubeConfig,
  tuning: Partial<CredentialOptions> = {},
): Credentials {
  const options = { ...defaultCredentialOptions, ...tuning };
  const user = kubeConfig.getCurrentUser();
  if (user === null) return fixedCredentials({});
  const certFile = user.certFile ? new WatchedFile(user.certFile, options) : undefined;
  const keyFile = user.keyFile ? new WatchedFile(user.keyFile, options) : undefined;
  const certData = user.certData ? Buffer.from(user.certData, 'base64').toString() : undefined;
  const keyData = user.keyData ? Buffer.from(user.keyData, 'base64').toString() : undefined;
  const authorization = authorizationSource(kubeConfig, user, options);
  let last = '';
  const read = async (force: boolean): Promise<AuthMaterial> => {
    const [auth, cert, key] = await Promise.all([
      authorization(force),
      certFile?.read(force),
      keyFile?.read(force),
    ]);
    return {
      authorization: auth.authorization,
      cert: cert ?? auth.cert ?? certData,
      key: key ?? auth.key ?? keyData,
    };
  };
  const fingerprint = (m: AuthMaterial): string =>
    `${m.authorization ?? ''}\n${m.cert ?? ''}\n${m.key ?? ''}`;
  return {
    async current() {
      const material = await read(false);
      last = fingerprint(material);
      return material;
    },
    async refresh() {
      const before = last;
      const material = await read(true);
      last = fingerprint(material);
      return last !== before;
    },
  };
}

type AuthorizationSource = (force: boolean) => Promise<AuthMaterial>;

function authorizationSource(
  kubeConfig: KubeConfig,
  user: User,
  options: CredentialOptions,
): AuthorizationSource {
  const provider = user.authProvider as
    { name?: string; config?: { tokenFile?: string; exec?: ExecConfig } } | undefined;
  const exec = (user.exec as ExecConfig | undefined) ?? provider?.config?.exec;
  if (exec !== undefined) {
    const plugin = new ExecPlugin(exec, options);
    return (force) => plugin.current(force);
  }
  const tokenFile = provider?.config?.tokenFile;
  if (tokenFile !== undefined) {
    const file = new WatchedFile(tokenFile, options);
    return async (force) => ({ authorization: `Bearer ${(await file.read(force)).trim()}` });
  }
  if (user.token) {
    const fixed = { authorization: `Bearer ${user.token}` };
    return () => Promise.resolve(fixed);
  }
  if (provider !== undefined) {
    // OIDC, Azure, GCP...: client-node's providers refresh themselves.
    return async () => {
      const opts: { headers: Record<string, string> } = { headers: {} };
      await kubeConfig.applyToHTTPSOptions(opts);
      return { authorization: opts.headers['Authorization'] ?? opts.headers['authorization'] };
    };
  }
  return () => Promise.resolve({});
}

/**
 * A kubeconfig of the same cluster whose user keeps only what is not a credential (TLS settings,
 * impersonation, basic auth), so applying it never runs an exec plugin or reads a token.
 */
export function withoutCredentials(kubeConfig: KubeConfig): KubeConfig {
  const user = kubeConfig.getCurrentUser();
  const copy = new KubeConfig();
  const bare = user === null ? [] : [{ name: user.name, ...pickTls(user) }];
  copy.loadFromOptions({
    clusters: kubeConfig.clusters,
    users: bare,
    contexts: kubeConfig.contexts,
    currentContext: kubeConfig.currentContext,
  });
  return copy;
}

function pickTls(user: User): Partial<User> {
  const { username, password, impersonateUser } = user;
  return {
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    ...(impersonateUser === undefined ? {} : { impersonateUser }),
  };
}
