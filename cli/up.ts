// `olmq up` (what `npm start` runs): the whole system on one machine.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startNatsServer, type NatsServer } from '../shared/bus/nats-server.js';
import { createLogger } from '../shared/runtime/log.js';
import { exitCodes, type CommandConfig } from './commands.js';

/** Pieces of the system that have not landed yet, named so `npm start` says what is missing. */
const pendingPieces = [
  'the embedded devcluster (issue #3)',
  'the watcher and the function host (issue #4)',
  'the catalog, resolve, plan, install, rbac and copy-csv functions (issues #5 to #8)',
];

/** Starts what exists of the system and names what does not exist yet. */
export async function runUp(config: CommandConfig<'up'>): Promise<number> {
  const log = createLogger('up', config.logLevel);
  let nats: NatsServer | undefined;
  if (config.natsUrl === undefined) {
    const storeDir = resolve(join(config.dataDir, 'nats'));
    await mkdir(storeDir, { recursive: true });
    nats = await startNatsServer({ storeDir, monitoring: true });
    log.info({ url: nats.url, storeDir }, 'local nats-server started');
  }
  const natsUrl = nats?.url ?? config.natsUrl;
  process.stdout.write(
    [
      `NATS JetStream: ${natsUrl}${nats === undefined ? ' (given)' : ' (local nats-server)'}`,
      'Not built yet, so olmq stops here:',
      ...pendingPieces.map((piece) => `  - ${piece}`),
      '',
    ].join('\n'),
  );
  await nats?.stop();
  return exitCodes.notAvailable;
}
