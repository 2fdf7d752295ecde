import { join } from 'node:path';
import { tempDir } from '../helpers/temp.js';
import { envFor, rateLimitsAcrossTwoServers, tokenReservationsAcrossTwoServers } from './rate-limit-scenario.js';

// Two real `mgpt serve` processes on one SQLite file: one limit between them (issue 23).
const dir = tempDir('mgpt-rate-sqlite-');
const db = join(dir, 'shared.db');
rateLimitsAcrossTwoServers('one SQLite file', () => envFor(dir, db));
tokenReservationsAcrossTwoServers('one SQLite file', () => envFor(dir, db), () => db);
