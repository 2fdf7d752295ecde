import { afterAll, it } from 'vitest';
import { startPostgres } from '../helpers/postgres.js';
import { contractSuite } from './cases.js';
import { replicasTarget } from './harness.js';

// The third configuration: the remote backend against two mgpt serve replicas (two engines, two
// pools, two listeners) on one PostgreSQL database, each request going to the other replica.
const cluster = await startPostgres('the contract on two serve replicas over PostgreSQL');
afterAll(() => cluster?.stop());

// Where PostgreSQL cannot start here (not installed), startPostgres() has printed a banner saying
// these did not run; under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead,
// so CI always runs them. The skipped case below only names what did not run.
if (cluster) contractSuite('two replicas on PostgreSQL', (dir, fake) => replicasTarget(dir, fake, cluster.url));
else it.skip('the contract on two serve replicas: PostgreSQL could not be started here (see the banner)', () => {});
