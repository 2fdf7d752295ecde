// Bundles src/cli/main.ts into dist/ (ESM, code-split so commands load the engine lazily).
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { cli: 'src/cli/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Native addon and the tokenizer's large tables stay in node_modules.
  external: ['better-sqlite3', 'gpt-tokenizer', 'gpt-tokenizer/*'],
  define: { MGPT_VERSION: JSON.stringify(pkg.version) },
  banner: { js: "import { createRequire as __mgptCreateRequire } from 'node:module'; const require = __mgptCreateRequire(import.meta.url);" },
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  logLevel: 'warning',
});
