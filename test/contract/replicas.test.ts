import { afterAll, describe, it } from 'vitest';
import { startPostgres } from '../helpers/postgres.js';
import { contractSuite } from './cases.js';
import { replicasTarget } from './harness.js';

// The third configuration: the remote backend against two mgpt serve replicas (two engines, two
// pools, two listeners) on one PostgreSQL database, each request going to the other replica.
const cluster = await startPostgres('the contract on two serve replicas over PostgreSQL');
afterAll(() => cluster?.stop());

if (cluster) contractSuite('two replicas on PostgreSQL', (dir, fake) => replicasTarget(dir, fake, cluster.url));
else describe.skip('contract: two replicas on PostgreSQL', () => it('needs PostgreSQL', () => {}));
