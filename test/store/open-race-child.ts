import { openDatabase } from '../../src/store/sqlite/db.js';

// One of the processes open-race.test.ts starts: for each round it waits for the round's moment
// (all of them share it), then opens that round's new file, as a replica starting would.
const [dir, start, rounds, gap] = process.argv.slice(2);
const failures: string[] = [];
for (let round = 0; round < Number(rounds); round++) {
  const at = Number(start) + round * Number(gap);
  while (Date.now() < at);
  try {
    openDatabase(`${dir}/race-${round}.db`).close();
  } catch (err) {
    failures.push(`round ${round}: ${(err as Error).message}`);
  }
}
process.stdout.write(JSON.stringify(failures));
