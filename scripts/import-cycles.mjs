// Lists import cycles among src/ modules, type-only imports included: `import type` is erased from
// the bundle, but two modules that name each other's types still cannot be understood (or moved)
// one without the other. Every static import and re-export counts, and so does a dynamic import().
// Exits 1 when there is one. Used by test/core/import-cycles.test.ts.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : /\.tsx?$/.test(d.name) && !d.name.endsWith('.d.ts') ? [join(dir, d.name)] : [],
  );
}

/** The file a relative specifier names (`./x.js` is `./x.ts` or `./x.tsx` in the source), if it is one of ours. */
function resolveSpecifier(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec).replace(/\.js$/, '');
  return [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((f) => existsSync(f));
}

/** Every edge between two files under src/, type-only imports included (paths relative to the repository, like `src/x.ts`). */
export async function importGraph() {
  const graph = new Map();
  for (const file of sources(join(root, 'src'))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const edges = importedFiles.flatMap((i) => {
      const to = resolveSpecifier(file, i.fileName);
      return to ? [relative(root, to).split('\\').join('/')] : [];
    });
    graph.set(relative(root, file).split('\\').join('/'), [...new Set(edges)]);
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
