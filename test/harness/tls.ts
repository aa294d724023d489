// Test fixture: a throwaway certificate authority with a server certificate for 127.0.0.1 and
// localhost and a client certificate, made with openssl in a temp dir removed at teardown.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

/** PEM files of the CA, the server and a client. */
export interface TlsFiles {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
}

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT')
      throw new Error('openssl not found: the TLS tests need it on PATH', { cause: error });
    throw new Error(`openssl ${args[0] ?? ''} failed: ${e.stderr?.toString() ?? e.message}`, {
      cause: error,
    });
  }
}

/** Makes a CA and certificates signed by it for test `t`. */
export function tlsFilesFor(t: Test): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const key = (name: string) =>
    openssl(dir, [
      'genpkey',
      '-algorithm',
      'EC',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-out',
      name,
    ]);
  key('ca.key');
  openssl(dir, [
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-subj',
    '/CN=olmq test CA',
    '-days',
    '2',
    '-out',
    'ca.crt',
  ]);
  const issue = (name: string, subject: string, extensions: string) => {
    key(`${name}.key`);
    openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ]);
  };
  issue(
    'server',
    '/CN=localhost',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  );
  issue('client', '/CN=olmq', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    serverCertFile: join(dir, 'server.crt'),
    serverKeyFile: join(dir, 'server.key'),
    clientCertFile: join(dir, 'client.crt'),
    clientKeyFile: join(dir, 'client.key'),
  };
}
