// Builds dist/: one CommonJS bundle for the CLI, plus self-contained ESM bundles of ESM-only vendors.
//
// Why CommonJS: on Node 20 an ESM entry costs ~20 ms more at startup than a CommonJS one, and a
// plain command should start close to bare `node`. esbuild wraps every module the CLI imports
// dynamically in a lazy initializer, so the engine, SQLite, providers and chalk are evaluated only
// by the commands that use them. Large libraries that only some commands need (conf and undici are
// also ESM-only, which Node 20 cannot require()) are each bundled alone into dist/vendor/*.mjs and
// loaded with import() on first use, so plain commands do not even parse them; they share no
// classes with mgpt's code, so nothing is duplicated across bundles.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
/** Each vendor bundle re-exports what mgpt uses of the package. */
const vendors = {
  conf: "export { default } from 'conf';",
  undici: "export { request } from 'undici';",
  yaml: "export { parse, stringify } from 'yaml';",
  // The PostgreSQL driver (~170 KB) is loaded only for a postgres:// URL: kept out of the CLI bundle
  // every SQLite command parses.
  pg: "export { default } from 'pg';",
  // The MCP SDK (with zod and ajv, ~1 MB) is loaded only by `mgpt mcp` and a request to /mcp.
  mcp: "export * from './src/mcp/sdk.ts';",
};
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });

/** Points imports of a vendor at its separate bundle, kept as a runtime import(). */
const vendorPlugin = {
  name: 'vendor',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${Object.keys(vendors).join('|')})$`) }, (args) => ({
      path: `./vendor/${args.path}.mjs`,
      external: true,
    }));
    b.onResolve({ filter: /(^|\/)sdk\.js$/ }, (args) =>
      /(^|\/)mcp\/sdk\.js$/.test(args.path) || /[\\/]src[\\/]mcp[\\/][^\\/]+$/.test(args.importer) ? { path: './vendor/mcp.mjs', external: true } : undefined,
    );
  },
};

/** `mgpt serve` loads the server bundle: Hono stays out of every other command's startup. */
const serverPlugin = {
  name: 'server',
  setup(b) {
    b.onResolve({ filter: /server\/listen\.js$/ }, () => ({ path: './server.cjs', external: true }));
  },
};

/**
 * The tokenizer (gpt-tokenizer's BPE over the compact o200k table) is its own small bundle, loaded
 * by the commands that count tokens; it returns only numbers and strings, so no class is shared.
 */
const tokenizerPlugin = {
  name: 'tokenizer',
  setup(b) {
    // A CommonJS require: import() of a .cjs would run cjs-module-lexer over it (~9 ms).
    b.onResolve({ filter: /(^|\/)tokens-table\.js$/ }, () => ({ path: 'tokenizer', namespace: 'tokenizer' }));
    b.onResolve({ filter: /^\.\/tokenizer\.cjs$/ }, () => ({ path: './tokenizer.cjs', external: true }));
    b.onLoad({ filter: /.*/, namespace: 'tokenizer' }, () => ({ contents: "module.exports = require('./tokenizer.cjs');", loader: 'js' }));
  },
};

/**
 * WordNet's lexicon (recall's word forms, src/core/text/lexicon-table.ts) is its own bundle,
 * dist/lexicon.cjs, required on a turn's first recall: ~3 MB no other command parses.
 */
const lexiconPlugin = {
  name: 'lexicon',
  setup(b) {
    b.onResolve({ filter: /(^|\/)lexicon-table\.js$/ }, () => ({ path: 'lexicon', namespace: 'lexicon' }));
    b.onResolve({ filter: /^\.\/lexicon\.cjs$/ }, () => ({ path: './lexicon.cjs', external: true }));
    b.onLoad({ filter: /.*/, namespace: 'lexicon' }, () => ({ contents: "module.exports = require('./lexicon.cjs');", loader: 'js' }));
  },
};

/**
 * wink-lexicon's tables are modules of one assignment a word (77,000 for its words): ~0.5 s to
 * load. The lexicon bundle gets the same tables as data: the words as one string split into an
 * object of the same indexes, the rest as JSON, each object without a prototype as wink's are
 * (a word like "constructor" must not find Object's). The lemmatizer's code is wink's own.
 */
const lexiconDataPlugin = {
  name: 'lexicon-data',
  setup(b) {
    const require = createRequire(import.meta.url);
    b.onLoad({ filter: /wink-lexicon[\\/]src[\\/]wn-(words|word-senses|verb-exceptions|noun-exceptions|adjective-exceptions)\.js$/ }, (args) => {
      const table = require(args.path);
      if (Array.isArray(table)) return { contents: `module.exports = JSON.parse(${JSON.stringify(JSON.stringify(table))});`, loader: 'js' };
      if (args.path.match(/wn-words\.js$/)) {
        const list = [];
        for (const [w, i] of Object.entries(table)) list[i] = w;
        if (list.length !== Object.keys(table).length || list.some((w) => w === undefined || w.includes('\n'))) throw new Error('wink-lexicon changed: its words are no longer one index each');
        return { contents: `const a = ${JSON.stringify(list.join('\n'))}.split('\\n'); const w = Object.create(null); for (let i = 0; i < a.length; i++) w[a[i]] = i; module.exports = w;`, loader: 'js' };
      }
      return { contents: `module.exports = Object.assign(Object.create(null), JSON.parse(${JSON.stringify(JSON.stringify(table))}));`, loader: 'js' };
    });
  },
};

/**
 * commander requires node:child_process at load (with node:net behind it, ~4 ms) for executable
 * subcommands, which mgpt has none of: it is required when first used instead. The build fails
 * loudly if a new commander no longer has that line.
 */
const lazyChildProcessPlugin = {
  name: 'commander-lazy-child-process',
  setup(b) {
    b.onLoad({ filter: /commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const src = readFileSync(args.path, 'utf8');
      const line = "const childProcess = require('node:child_process');";
      if (!src.includes(line)) throw new Error(`commander changed: cannot find its child_process require in ${args.path}`);
      return { contents: src.replace(line, "const childProcess = { get spawn() { return require('node:child_process').spawn; } };"), loader: 'js' };
    });
  },
};

/** `mgpt chat` on a terminal loads the chat bundle (ink, react, yoga): no other command parses it. */
const chatPlugin = {
  name: 'chat',
  setup(b) {
    b.onResolve({ filter: /ui\/run-chat\.js$/ }, () => ({ path: './chat.mjs', external: true }));
  },
};

/**
 * ink connects to React DevTools only when DEV=true, through react-devtools-core, which is not
 * installed; the bundle would otherwise import it at load. DEV=true gets a clear error instead.
 */
const devtoolsPlugin = {
  name: 'no-devtools',
  setup(b) {
    b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'no-devtools' }));
    b.onLoad({ filter: /.*/, namespace: 'no-devtools' }, () => ({
      contents: "const fail = () => { throw new Error('React DevTools (DEV=true) is not part of mgpt'); }; export default { initialize: fail, connectToDevTools: fail };",
      loader: 'js',
    }));
  },
};

/**
 * yoga-layout (ink's layout) fetches its inlined wasm with fetch() whenever fetch exists, which
 * loads Node's internal undici: ~60 ms of `mgpt chat` startup for a data: URL. The emscripten
 * loader decodes the same bytes itself when told fetch is unavailable; the build fails loudly if
 * a new yoga version no longer has that test.
 */
const yogaPlugin = {
  name: 'yoga-no-fetch',
  setup(b) {
    b.onLoad({ filter: /yoga-wasm-base64-esm\.js$/ }, (args) => {
      const src = readFileSync(args.path, 'utf8');
      const test = 'return w||"function"!=typeof fetch?Promise.resolve()';
      if (!src.includes(test)) throw new Error(`yoga-layout changed: cannot find its fetch test in ${args.path}`);
      return { contents: src.replace(test, 'return true?Promise.resolve()'), loader: 'js' };
    });
  },
};

/**
 * In CI (the CI variable set) ink writes only the final frame. mgpt renders ink only when stdin and
 * stdout are a terminal, so a person is watching: the screen must be live whatever CI says.
 */
const liveInkPlugin = {
  name: 'ink-always-live',
  setup(b) {
    b.onResolve({ filter: /^is-in-ci$/ }, () => ({ path: 'is-in-ci', namespace: 'ink-always-live' }));
    b.onLoad({ filter: /.*/, namespace: 'ink-always-live' }, () => ({ contents: 'export default false;', loader: 'js' }));
  },
};

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // The tokenizer's large tables stay in node_modules (loaded with import() when first needed);
  // better-sqlite3's JS is bundled and its compiled addon is loaded by path (src/store/sqlite/db.ts).
  external: ['gpt-tokenizer', 'gpt-tokenizer/*', '*.node', 'node-llama-cpp'],
  define: { MGPT_VERSION: JSON.stringify(pkg.version), 'import.meta.url': '__mgpt_import_meta_url' },
  banner: { js: "const __mgpt_import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  legalComments: 'none',
  logLevel: 'warning',
};

/**
 * The console (`mgpt serve` at /): a browser bundle of plain DOM code, its page and its style, in
 * dist/console/. Nothing is fetched from anywhere else at run time; the server sends them with a
 * policy that allows only its own files.
 */
async function buildConsole() {
  mkdirSync(new URL('../dist/console', import.meta.url), { recursive: true });
  for (const f of ['index.html', 'app.css']) copyFileSync(new URL(`../src/console/${f}`, import.meta.url), new URL(`../dist/console/${f}`, import.meta.url));
  await build({
    entryPoints: ['src/console/main.ts'],
    outfile: 'dist/console/app.js',
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
}

await Promise.all([
  buildConsole(),
  // The server bundle builds its own engine from options (src/server/listen.ts), so no object
  // crosses between the two bundles' copies of the engine's classes.
  build({ ...common, entryPoints: ['src/server/listen.ts'], outfile: 'dist/server.cjs', plugins: [vendorPlugin, tokenizerPlugin, lexiconPlugin] }),
  build({ ...common, entryPoints: ['src/core/text/lexicon-table.ts'], outfile: 'dist/lexicon.cjs', plugins: [lexiconDataPlugin] }),
  // The worker thread that writes large entities (src/store/sqlite/large-writer.ts) loads this beside the bundle that starts it.
  build({ ...common, entryPoints: ['src/store/sqlite/large-write-worker.ts'], outfile: 'dist/sqlite-writer.cjs' }),
  // The worker thread that reads a large conversation of a chat export (src/engine/imports/reader-pool.ts), loaded the same way.
  build({ ...common, entryPoints: ['src/engine/imports/reader-worker.ts'], outfile: 'dist/import-reader.cjs' }),
  // gpt-tokenizer's code is bundled here (its o200k module with the 2.4 MB ranks literal is not).
  build({ ...common, entryPoints: ['src/core/text/tokens-table.ts'], outfile: 'dist/tokenizer.cjs', external: ['*.node'] }),
  build({
    ...common,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.cjs',
    plugins: [vendorPlugin, serverPlugin, chatPlugin, tokenizerPlugin, lexiconPlugin, lazyChildProcessPlugin],
    banner: {
      js: `${common.banner.js}\nconst __mgpt_import = typeof __mgpt_dynamic_import === 'function' ? __mgpt_dynamic_import : (specifier) => import(specifier);`,
    },
  }),
  // ESM: yoga-layout (ink's layout engine) starts with a top-level await, which CommonJS cannot hold.
  build({
    entryPoints: ['src/ui/run-chat.tsx'],
    outfile: 'dist/chat.mjs',
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    jsx: 'automatic',
    plugins: [devtoolsPlugin, yogaPlugin, liveInkPlugin],
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: true,
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    legalComments: 'none',
    logLevel: 'warning',
  }),
  ...Object.entries(vendors).map(([name, contents]) =>
    build({
      stdin: { contents, resolveDir: '.', loader: 'js' },
      outfile: `dist/vendor/${name}.mjs`,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
      legalComments: 'none',
      logLevel: 'warning',
    }),
  ),
]);

/**
 * bin/mgpt compiles dist/cli.cjs with vm.Script to use V8's code cache, where import() needs
 * --experimental-vm-modules: the bundle's dynamic imports call the launcher's import() instead
 * (`__mgpt_import`, declared in the banner; a plain require() of the bundle uses its own import()).
 * Every import() with a literal specifier is rewritten; the build fails if any other is left.
 */
function routeDynamicImports(file) {
  const src = readFileSync(file, 'utf8');
  const out = src.replace(/(?<![\w$.])import\((?=["'`])/g, '__mgpt_import(');
  const left = out.split('\n').filter((line) => /(?<![\w$.])import\(/.test(line) && !/^\s*(async\s+)?import\([\w$]/.test(line) && !line.startsWith('const __mgpt_import = '));
  if (left.length) throw new Error(`${file}: import() with a computed specifier, which bin/mgpt cannot route:\n${left.join('\n')}`);
  writeFileSync(file, out);
}
routeDynamicImports(new URL('../dist/cli.cjs', import.meta.url));

// The o200k ranks as the compact table dist/tokenizer.cjs reads, encoded by that same bundle.
const { encodeO200kTable } = createRequire(import.meta.url)('../dist/tokenizer.cjs');
const { default: o200kRanks } = await import('gpt-tokenizer/bpeRanks/o200k_base');
writeFileSync(new URL('../dist/o200k.table', import.meta.url), encodeO200kTable(o200kRanks));

/**
 * V8's code cache for dist/cli.cjs (bin/mgpt reads it; see there), made now so the first command
 * after an install does not pay for it: bin/mgpt writes it when a command ran without one, with the
 * functions that command compiled, so a one-shot send (engine, SQLite, provider) makes it, in a
 * throwaway database. Best effort: without it the first command writes it.
 */
function makeCodeCache() {
  const bin = fileURLToPath(new URL('../bin/mgpt', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'mgpt-build-'));
  // SystemRoot and USERPROFILE: Windows needs them to start node at all.
  const env = { ...(process.env.SystemRoot ? { SystemRoot: process.env.SystemRoot } : {}), PATH: process.env.PATH, USERPROFILE: dir, APPDATA: join(dir, 'appdata'), HOME: dir, MGPT_DB: join(dir, 'mgpt.db'), MGPT_CONFIG_DIR: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data'), NO_COLOR: '1' };
  try {
    const id = spawnSync(process.execPath, [bin, 'entities', 'create'], { env, encoding: 'utf8' }).stdout.trim();
    rmSync(new URL('../dist/cli.cjs.v8cache', import.meta.url), { force: true });
    if (id) spawnSync(process.execPath, [bin, 'send', id, 'hi'], { env, stdio: 'ignore' });
  } finally {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // A file still held (Windows) stays in the temp directory; the build goes on.
    }
  }
}
try {
  makeCodeCache();
} catch (err) {
  console.warn(`build: no V8 code cache made (${err.message}); the first command makes it`);
}
