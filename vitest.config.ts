import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Two tiers, both run by `npm test`: `unit` (in-process, seconds) and `slow` (the real binary,
// servers, PostgreSQL, pseudo-terminals, npm itself, a browser). `npx vitest --project unit` runs the first alone.
const SLOW = ['test/e2e/**', 'test/install/**', 'test/server/**', 'test/contract/**', 'test/console/**'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most test time is spent waiting on what a test started (the binary, servers, PostgreSQL,
    // llama-server), not on this process's CPU; vitest's default (one worker fewer than the cores)
    // leaves a 2-core machine running one file at a time. Measured on 2 cores: 228 s with the
    // default, 103 s with 3 workers.
    maxWorkers: Math.min(6, Math.max(3, availableParallelism())),
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.{ts,tsx}'], exclude: SLOW } },
      { extends: true, test: { name: 'slow', include: SLOW.map((d) => `${d.replace('/**', '')}/**/*.test.{ts,tsx}`) } },
    ],
  },
});
