import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const banner = '!'.repeat(78);

/**
 * Whether node-llama-cpp is installed. It is the user's optional install, not a dependency of mgpt,
 * so a fresh clone lacks it (.ci/run installs it on linux-x64); tests that need it then say loudly
 * that they did not run.
 */
export function llamaInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('node-llama-cpp');
    return true;
  } catch {
    console.warn(
      `\n${banner}\n!! THE LLAMA TESTS DID NOT RUN: node-llama-cpp is not installed (an optional install;\n` +
        `!! \`mgpt\` prints the command for this machine when a llama turn needs it; .ci/run installs it).\n${banner}\n`,
    );
    return false;
  }
}

/** Prompts the tiny story model knows how to go on from. */
export const STORY_PROMPTS = [
  'Once upon a time there was a little girl named Lily who loved the park.',
  'What did Lily find under the big tree?',
  'Tell me about her friend the dog.',
  'Where did they go when it started to rain?',
  'What did her mom say when she came home?',
];

export const STORIES_SHA256 = '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d';

/**
 * The tiny real model for the llama tests, from MGPT_TEST_GGUF (.ci/run sets it when the file sits
 * beside the project). Unset: the model is not part of the repository (it is never committed), so
 * the tests cannot run, and say so loudly. Set but missing, or not the expected file: a failure.
 * Null too, with its own banner, when node-llama-cpp is not installed to run it.
 */
export function testGguf(): string | null {
  const path = process.env.MGPT_TEST_GGUF;
  if (path && !existsSync(path)) throw new Error(`MGPT_TEST_GGUF=${path}: no such file`);
  if (!path) {
    console.warn(
      `\n${banner}\n!! THE LLAMA TESTS DID NOT RUN: no model at MGPT_TEST_GGUF=${path ?? '(unset)'}\n` +
        `!! Point it at stories260K.gguf (sha256 ${STORIES_SHA256.slice(0, 12)}…); .ci/run does.\n${banner}\n`,
    );
    return null;
  }
  const sha = createHash('sha256').update(readFileSync(path)).digest('hex');
  if (sha !== STORIES_SHA256) throw new Error(`${path} is not stories260K.gguf: sha256 ${sha}, expected ${STORIES_SHA256}`);
  return llamaInstalled() ? path : null;
}
