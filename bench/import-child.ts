// Runs in its own process so its peak memory belongs to the import alone (bench/import.ts).
import { openEngineSync } from '../src/engine/open-engine.js';
import { openEngine } from '../src/engine/open-engine.js';

const [db, file] = process.argv.slice(2);
const engine = db.startsWith('postgres') ? await openEngine({ db }) : openEngineSync({ db });
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const res = await engine.importChats(file, { from: 'chatgpt' }, 'local');
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const peakRss = process.resourceUsage().maxRSS * 1024;
process.stdout.write(JSON.stringify({ ms, cpuMs, conversations: res.totals.imported, messages: res.totals.messages, peakRss }));
await engine.close();
