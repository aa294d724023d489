// `olmq registry serve` as a process: serving line, answers, warnings logged, SIGTERM, bad --fbc.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { fetchRegistryCatalog, probeRegistry } from '../../shared/registry/client.js';
import { runOlmq as olmq } from '../harness/cli.js';
import { olmqBin, smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const etcd = join(smallCatalog, 'etcd');

function startServe(args: string[]) {
  const child = spawn(process.execPath, [olmqBin, 'registry', 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output.stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited };
}

function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

t.test(
  'registry cli - serve prints its address, answers, logs warnings and stops on SIGTERM',
  async (t) => {
    // etcd plus a bundle in no channel (and without a CSV): two warnings for the log.
    const dir = await mkdtemp(join(tmpdir(), 'olmq-registry-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const text = await readFile(join(etcd, 'catalog.json'), 'utf8');
    const stray = {
      schema: 'olm.bundle',
      name: 'etcdoperator.v9.9.9',
      package: 'etcd',
      image: 'quay.io/example/etcd:9.9.9',
      properties: [{ type: 'olm.package', value: { packageName: 'etcd', version: '9.9.9' } }],
    };
    await writeFile(join(dir, 'catalog.json'), `${text.trimEnd()}\n${JSON.stringify(stray)}\n`);

    const serve = startServe(['--fbc', dir, '--port', '0', '--host', '127.0.0.1']);
    t.teardown(() => serve.child.kill('SIGKILL'));
    const address = await waitFor(
      'the serving line',
      () => /serving api\.Registry on (127\.0\.0\.1:\d+)/.exec(serve.output.stdout)?.[1],
      60_000,
    );
    t.match(serve.output.stdout, `(${dir}: 1 packages, 6 bundles, 2 warnings)`);
    t.not(address, '127.0.0.1:0', 'port 0 became a real port');

    t.equal((await probeRegistry(address)).state, 'READY');
    const objects = await fetchRegistryCatalog({ address });
    t.equal(
      objects.filter((o) => o.schema === 'olm.bundle').length,
      6,
      'the stray bundle is not served',
    );

    const warning = logLines(serve.output.stderr).find(
      (l) => l['code'] === 'bundle-not-in-channel',
    );
    t.ok(warning, 'the catalog warning is logged');
    t.equal(warning?.['level'], 40, 'at warn level');
    t.equal(warning?.['bundle'], 'etcdoperator.v9.9.9');

    serve.child.kill('SIGTERM');
    t.equal(await serve.exited, 0, 'exits 0 after SIGTERM');
    t.ok(
      logLines(serve.output.stderr).some((l) => l['msg'] === 'shutting down'),
      'logs the shutdown',
    );
    t.equal(
      (await probeRegistry(address, 1_000)).state,
      'TRANSIENT_FAILURE',
      'no longer listening',
    );
  },
);

t.test('registry cli - a missing --fbc directory exits 2 naming it', async (t) => {
  const missing = join(tmpdir(), 'olmq-no-such-catalog');
  const { code, stderr } = await olmq(['registry', 'serve', '--fbc', missing, '--port', '0']);
  t.equal(code, 2);
  t.match(stderr, `olmq registry serve: --fbc ${missing}: cannot read catalog at ${missing}`);
  t.match(stderr, /ENOENT/);
});

t.test('registry cli - a malformed catalog file exits 2 naming file and line', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'olmq-registry-bad-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'catalog.json'),
    '{"schema":"olm.package","name":"a"}\n{"schema": oops\n',
  );
  const { code, stderr } = await olmq(['registry', 'serve', '--fbc', dir, '--port', '0']);
  t.equal(code, 2);
  t.match(stderr, `olmq registry serve: --fbc ${dir}: catalog.json:2: not valid catalog JSON/YAML`);
});

t.test('registry cli - --fbc or --image is required', async (t) => {
  const { code, stderr } = await olmq(['registry', 'serve']);
  t.equal(code, 2);
  t.match(stderr, /give exactly one of --fbc DIR and --image REF/);
});

t.test(
  'registry cli - the image ships the .proto files the registry loads at runtime',
  async (t) => {
    const dockerfile = await readFile(join(olmqBin, '..', '..', '..', 'Dockerfile'), 'utf8');
    t.match(
      dockerfile,
      /^COPY --from=build \/app\/shared\/registry\/proto \.\/shared\/registry\/proto$/m,
    );
  },
);
