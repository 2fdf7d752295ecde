import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Real OpenAI clients the Responses tests run (the Agents SDK, Codex CLI). They are test tools, not
 * the product's: Codex's linux-x64 build alone is over 400 MB and the Agents SDK declares Node 22,
 * so they are not in package.json (a user's `npm install` would fetch them). `.ci/run` installs
 * the pinned versions into a tree of their own, `node_modules/.clients`; elsewhere these tests say
 * loudly that they did not run, and with MGPT_TEST_REQUIRE_CLIENTS=1 (CI) a missing client fails.
 */
export const CLIENTS_DIR = fileURLToPath(new URL('../../node_modules/.clients/', import.meta.url));

export const CLIENT_VERSIONS = { '@openai/agents': '0.20.0', '@openai/codex': '0.171.0' } as const;

/** The resolved entry of `specifier` inside the clients' tree, or null when it is not installed. */
export function clientModule(specifier: string): string | null {
  if (!existsSync(join(CLIENTS_DIR, 'node_modules'))) return null;
  try {
    return createRequire(join(CLIENTS_DIR, 'node_modules', '.resolve-here')).resolve(specifier);
  } catch {
    return null;
  }
}

/** Says loudly that a client test cannot run here; throws in CI, where it must. */
export function clientMissing(name: keyof typeof CLIENT_VERSIONS): void {
  const how = `npm install --prefix node_modules/.clients ${name}@${CLIENT_VERSIONS[name]} (as .ci/run does)`;
  if (process.env.MGPT_TEST_REQUIRE_CLIENTS === '1') throw new Error(`${name} is required here (MGPT_TEST_REQUIRE_CLIENTS=1) but not installed: ${how}`);
  console.warn(`\n*** ${name} tests did NOT run: it is not installed. To run them: ${how} ***\n`);
}
