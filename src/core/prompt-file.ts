import { BadRequestError } from './errors.js';

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

/** Splits front matter from the prompt text and checks its two known fields. */
export async function parsePromptText(
  raw: string,
  where: string,
): Promise<{ text: string; responseFormat?: Record<string, unknown>; additionalInstructions?: string }> {
  const m = FRONT.exec(raw);
  if (!m) return { text: raw.replace(/\n$/, '') };
  const { parse } = await import('yaml');
  let meta: unknown;
  try {
    meta = parse(m[1]) ?? {};
  } catch (err) {
    throw new BadRequestError(`front matter of ${where} is not valid YAML: ${(err as Error).message}`);
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw new BadRequestError(`front matter of ${where} must be a mapping`);
  const { responseFormat, additionalInstructions, ...rest } = meta as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) throw new BadRequestError(`front matter of ${where} has unknown keys: ${unknown.join(', ')} (known: responseFormat, additionalInstructions)`);
  if (responseFormat !== undefined && (typeof responseFormat !== 'object' || responseFormat === null || Array.isArray(responseFormat))) {
    throw new BadRequestError(`responseFormat in ${where} must be an object (the OpenAI response_format shape)`);
  }
  if (additionalInstructions !== undefined && typeof additionalInstructions !== 'string') {
    throw new BadRequestError(`additionalInstructions in ${where} must be a string`);
  }
  return {
    text: raw.slice(m[0].length).replace(/\n$/, ''),
    ...(responseFormat !== undefined ? { responseFormat: responseFormat as Record<string, unknown> } : {}),
    ...(additionalInstructions !== undefined ? { additionalInstructions } : {}),
  };
}
