import { afterAll, it } from 'vitest';
import { startPostgres } from '../helpers/postgres.js';
import { replicasTarget } from './harness.js';
import { rotationSuite } from './rotation-cases.js';

// The rotation history on two mgpt serve replicas over one PostgreSQL database, requests alternating.
const cluster = await startPostgres('the rotation history on two serve replicas over PostgreSQL');
afterAll(() => cluster?.stop());

// Where PostgreSQL cannot start here, startPostgres() printed a banner; under CI it throws instead.
if (cluster) rotationSuite('two replicas on PostgreSQL', (dir, fake) => replicasTarget(dir, fake, cluster.url));
else it.skip('the rotation history on two serve replicas: PostgreSQL could not be started here (see the banner)', () => {});
