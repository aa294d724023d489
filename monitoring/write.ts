// `npm run gen:monitoring`: writes the alert rules, the PrometheusRule and the Grafana
// dashboards into k8s/. Usage: node dist/monitoring/write.js <k8s dir>
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderMonitoringFiles } from './render.js';

/** Writes every generated file below `dir`; returns their paths. */
export async function writeMonitoring(dir: string): Promise<string[]> {
  const files = renderMonitoringFiles();
  for (const file of files) {
    const path = join(dir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.text);
  }
  return files.map((file) => file.path);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(resolve(entry)).href) {
  const target = process.argv[2];
  if (target === undefined) {
    process.stderr.write('usage: node dist/monitoring/write.js <k8s dir>\n');
    process.exitCode = 2;
  } else {
    const written = await writeMonitoring(resolve(target));
    process.stdout.write(`wrote ${written.join(', ')} to ${resolve(target)}\n`);
  }
}
