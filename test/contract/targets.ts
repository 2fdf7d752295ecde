import { afterAll, beforeAll, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { type ContractTarget, localTarget, remoteTarget, replicasTarget } from './harness.js';

// What the contract files share: the three configurations a contract runs on, and one target per
// configuration with its own fake provider, started before the configuration's tests and closed after.

export type MakeTarget = (dir: string, fake: FakeOpenAI) => Promise<ContractTarget>;

/**
 * The local backend and the remote one against mgpt serve, plus two serve replicas on one
 * PostgreSQL database when a cluster starts here (when it does not, a skipped test says so).
 */
export async function contractTargets(what: string): Promise<Array<[string, MakeTarget]>> {
  const targets: Array<[string, MakeTarget]> = [['local', localTarget], ['remote', remoteTarget]];
  const cluster = await startPostgres(`${what} on two serve replicas over PostgreSQL`);
  if (!cluster) {
    it.skip(`${what} on two serve replicas: PostgreSQL could not be started here (see the banner)`, () => {});
    return targets;
  }
  afterAll(() => cluster.stop());
  targets.push(['two replicas on PostgreSQL', (dir, fake) => replicasTarget(dir, fake, cluster.url)]);
  return targets;
}

export interface TargetContext {
  t: ContractTarget;
  fake: FakeOpenAI;
}

/** Called inside a describe block: the configuration's target, filled in before its tests run. */
export function useContractTarget(prefix: string, name: string, make: MakeTarget): TargetContext {
  const dir = tempDir(`${prefix}-${name.replace(/\W+/g, '-')}-`);
  const ctx = {} as TargetContext;
  beforeAll(async () => {
    ctx.fake = await startFakeOpenAI();
    ctx.t = await make(dir, ctx.fake);
  });
  afterAll(async () => {
    await ctx.t?.close();
    await ctx.fake?.close();
  });
  return ctx;
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
