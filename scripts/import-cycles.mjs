// Lists import cycles among src/ modules (runtime imports, as esbuild bundles them: `import type`
// is erased, a dynamic import() counts). Exits 1 when there is one. Used by test/core/import-cycles.test.ts.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : /\.tsx?$/.test(d.name) && !d.name.endsWith('.d.ts') ? [join(dir, d.name)] : [],
  );
}

/** Every runtime edge between two files under src/. */
export async function importGraph() {
  const { metafile } = await build({
    entryPoints: sources(join(root, 'src')),
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    outdir: '/nonexistent',
    packages: 'external',
    logLevel: 'silent',
    loader: { '.node': 'empty' },
  });
  const graph = new Map();
  for (const [file, info] of Object.entries(metafile.inputs)) {
    if (!file.startsWith('src/')) continue;
    graph.set(file, info.imports.map((i) => i.path).filter((p) => p.startsWith('src/')));
  }
  return graph;
}

/** Strongly connected components of more than one file (or a file importing itself): Tarjan. */
export function cycles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  const graph = await importGraph();
  const found = cycles(graph);
  console.log(`${graph.size} modules under src/, ${found.length} import cycle(s)`);
  for (const c of found) console.log('  ' + c.join(' <-> '));
  process.exitCode = found.length ? 1 : 0;
}
