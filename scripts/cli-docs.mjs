// Writes docs/cli.md from the CLI's own --help (help text is the documentation).
// `node scripts/cli-docs.mjs --check` exits 1 when docs/cli.md is out of date.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = `${root}bin/mgpt`;
const env = { PATH: process.env.PATH, HOME: '/nonexistent', NO_COLOR: '1', COLUMNS: '100' };
const help = (args) => execFileSync(process.execPath, [bin, ...args, '--help'], { env, encoding: 'utf8' });

/** Headings that list commands (src/cli/program.ts groups the top level); other sections (Keys:...) do not. */
const COMMAND_GROUPS = ['Commands', 'Talking', 'Entities', 'Universes', 'Server', 'Setup'];

/** The commands listed under every group heading (`Commands:`, or the top level's `Talking:`, `Entities:`...). */
function subcommands(text) {
  const out = [];
  for (const m of text.matchAll(/\n([A-Z][A-Za-z]+):\n([\s\S]*?)(?=\n\n|$)/g)) {
    if (!COMMAND_GROUPS.includes(m[1])) continue;
    // Command lines are indented two spaces; wrapped descriptions are indented further.
    for (const l of m[2].split('\n')) if (/^ {2}\S/.test(l)) out.push(l.trim().split(/[\s|]/)[0]);
  }
  return out.filter((c) => c !== 'help');
}

const sections = [];
function walk(path) {
  const text = help(path);
  sections.push(`## mgpt ${path.join(' ')}`.trimEnd() + '\n\n```text\n' + text.trimEnd() + '\n```\n');
  for (const c of subcommands(text)) walk([...path, c]);
}
walk([]);
const doc = `# mgpt command reference\n\nGenerated from \`mgpt --help\` by \`npm run docs\`; do not edit by hand.\n\n${sections.join('\n')}`;
const target = `${root}docs/cli.md`;
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  if (current !== doc) {
    console.error('docs/cli.md is out of date: run `npm run docs`');
    process.exit(1);
  }
} else {
  writeFileSync(target, doc);
}
