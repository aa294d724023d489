// Generates docs/configuration.md from the command table, so the reference never drifts from
// the options the CLI really accepts. `npm run gen:docs` writes it; a test checks it is current.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { commands, exitCodes, type Command } from './commands.js';

function section(c: Command): string[] {
  const name = `olmq ${c.words.join(' ')}`;
  const lines = [
    `## \`${name}${c.positionals ? ` ${c.positionals.usage}` : ''}\``,
    '',
    c.summary,
    '',
  ];
  if (c.positionals) lines.push(`\`${c.positionals.usage}\`: ${c.positionals.doc}`, '');
  const options = Object.values(c.options);
  if (options.length > 0) {
    lines.push('| flag | environment variable | default | meaning |', '| --- | --- | --- | --- |');
    for (const o of options) {
      const flag = `${o.short === undefined ? '' : `\`-${o.short}\`, `}\`--${o.flag}${o.placeholder === '' ? '' : ` ${o.placeholder}`}\``;
      const repeat = o.kind === 'repeated' ? ' Repeatable.' : '';
      lines.push(
        `| ${flag} | ${o.env === undefined ? '' : `\`${o.env}\``} | ${o.defaultText ?? ''} | ${o.doc}${repeat} |`,
      );
    }
    lines.push('');
  }
  return lines;
}

/** The configuration reference as Markdown. */
export function configurationReference(): string {
  return [
    '# Configuration reference',
    '',
    '<!-- Generated from cli/commands.ts by `npm run gen:docs`; do not edit by hand. -->',
    '',
    'Every option can be given as a flag; most also as an environment variable. A flag wins over',
    'the environment, which wins over the default. A bad value stops the command with a message',
    'naming the flag or variable, and exit code 2.',
    '',
    '| exit code | meaning |',
    '| --- | --- |',
    `| ${exitCodes.ok} | success |`,
    `| ${exitCodes.failed} | the command ran and failed (\`olmq resolve\`: unsatisfiable) |`,
    `| ${exitCodes.usage} | bad flags, environment variables or input files |`,
    '',
    ...Object.values(commands).flatMap((c) => section(c)),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(process.argv[2] ?? 'docs/configuration.md', configurationReference());
}
