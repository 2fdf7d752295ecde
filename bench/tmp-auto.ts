import { benchRotationCost } from './rotation-cache.js';
import { mkdtempSync } from 'node:fs';
const r = await benchRotationCost(mkdtempSync('/tmp/h42b-'), 2048, 200, {}, 'auto');
if (r) console.log(JSON.stringify({ ratio: r.processedPerTurn / r.growthPerTurn, processed: r.processedPerTurn, growth: r.growthPerTurn, reuse: r.cacheReuse, summaries: r.summariesPer100, recalled: r.recalledPerTurn, failures: r.failures, refused: r.refused }));
