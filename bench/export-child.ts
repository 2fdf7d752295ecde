// Runs in its own process so peak memory belongs to the export alone.
import { createWriteStream } from 'node:fs';
import { openEngineSync } from '../src/engine/open-engine.js';

const [dbPath, entityId, format, outPath] = process.argv.slice(2);
const engine = openEngineSync({ db: dbPath });
global.gc?.();
const baseline = process.memoryUsage().rss;
const out = createWriteStream(outPath);
const t0 = performance.now();
let bytes = 0;
for await (const piece of await engine.entities.export(entityId, format as 'tar' | 'json', 'local')) {
  bytes += piece.length;
  if (!out.write(piece)) await new Promise<void>((r) => out.once('drain', r));
}
await new Promise<void>((r) => out.end(r));
const ms = performance.now() - t0;
const peak = process.resourceUsage().maxRSS * 1024;
process.stdout.write(JSON.stringify({ ms, bytes, baselineRss: baseline, peakRss: peak, growth: peak - baseline }));
await engine.close();
