import { afterAll } from 'vitest';
import { startPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { envFor, rateLimitsAcrossTwoServers, tokenReservationsAcrossTwoServers } from './rate-limit-scenario.js';

// Two real `mgpt serve` replicas on one PostgreSQL database: one limit between them (issue 23).
// Where PostgreSQL cannot start here, startPostgres() prints a banner saying these did not run;
// under CI (MGPT_TEST_REQUIRE_POSTGRES, which .ci/run sets) it throws instead.
const cluster = await startPostgres('rate limits across two mgpt serve replicas on PostgreSQL');
afterAll(() => cluster?.stop());
const dir = tempDir('mgpt-rate-pg-');
rateLimitsAcrossTwoServers('one PostgreSQL database', () => (cluster ? envFor(dir, cluster.url) : null));
tokenReservationsAcrossTwoServers('one PostgreSQL database', () => (cluster ? envFor(dir, cluster.url) : null), () => cluster!.url);
