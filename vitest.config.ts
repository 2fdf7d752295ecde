import { defineConfig } from 'vitest/config';

// Two tiers, both run by `npm test`: `unit` (in-process, seconds) and `slow` (the real binary,
// servers, PostgreSQL, pseudo-terminals, npm itself). `npx vitest --project unit` runs the first alone.
const SLOW = ['test/e2e/**', 'test/install/**', 'test/server/**', 'test/contract/**'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.{ts,tsx}'], exclude: SLOW } },
      { extends: true, test: { name: 'slow', include: SLOW.map((d) => `${d.replace('/**', '')}/**/*.test.{ts,tsx}`) } },
    ],
  },
});
