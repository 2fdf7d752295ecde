import type { Command } from 'commander';
import { SAMPLING_FIELDS } from '../core/wire/sampling.js';
import { BadRequestError } from '../core/errors.js';

/** The sampling flags `ask` and `send` share, as commander gives them. */
export interface SamplingFlags {
  temperature?: string;
  maxTokens?: string;
  option?: string[];
}

export function addSamplingOptions(cmd: Command): Command {
  return cmd
    .option('--temperature <t>', 'sampling temperature for this request (0-2)')
    .option('--max-tokens <n>', 'longest reply in tokens (within the route\'s own limit)')
    .option('-o, --option <key value...>', 'another field for the model: top_p, seed, stop, ... or any field the provider takes (repeatable)');
}

/**
 * The request's sampling fields, in the wire names the engine checks (core/wire/sampling.ts): values
 * are JSON when they parse as JSON (`40`, `true`, `["a"]`), text otherwise. `-o` is variadic, so
 * with `mgpt ask -o top_k 40 "hi"` the odd word at its end is the TEXT argument: it is returned.
 */
export function samplingFields(flags: SamplingFlags, text: string | undefined): { fields?: Record<string, unknown>; text: string | undefined } {
  const fields: Record<string, unknown> = {};
  const provider: Record<string, unknown> = {};
  if (flags.temperature !== undefined) fields.temperature = value(flags.temperature);
  if (flags.maxTokens !== undefined) fields.max_tokens = value(flags.maxTokens);
  const words = [...(flags.option ?? [])];
  if (words.length % 2 === 1) {
    if (text !== undefined) throw new BadRequestError('-o takes KEY VALUE pairs', { hint: 'e.g. -o top_k 40 -o seed 1' });
    text = words.pop();
  }
  for (let i = 0; i < words.length; i += 2) {
    const [key, raw] = [words[i], words[i + 1]];
    if ((SAMPLING_FIELDS as readonly string[]).includes(key)) fields[key] = value(raw);
    else provider[key] = value(raw);
  }
  if (Object.keys(provider).length) fields.provider_options = provider;
  return { fields: Object.keys(fields).length ? fields : undefined, text };
}

function value(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
