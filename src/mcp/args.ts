import { BadRequestError } from '../core/errors.js';

/** One argument of a tool, as its JSON schema says it and as it is checked. */
export type ArgSpec =
  | { type: 'string'; description: string; maxLength: number; enum?: readonly string[] }
  | { type: 'integer'; description: string; minimum: number; maximum: number }
  | { type: 'array'; description: string; items: { type: 'integer' }; minItems: number; maxItems: number };

/** A tool's arguments: their specs and which are required. */
export interface ArgsSpec {
  properties: Record<string, ArgSpec>;
  required: readonly string[];
}

/** The JSON schema a client is shown for `spec` (additional arguments are refused). */
export function inputSchema(spec: ArgsSpec): { type: 'object'; properties: Record<string, unknown>; required: string[]; additionalProperties: false } {
  return { type: 'object', properties: spec.properties, required: [...spec.required], additionalProperties: false };
}

/**
 * The call's arguments checked against the tool's spec, at the edge: every refusal names the
 * argument and what it must be, and nothing reaches a backend unchecked. A string longer than its
 * maxLength is refused before anything else looks at it.
 */
export function parseArgs(tool: string, spec: ArgsSpec, args: unknown): Record<string, unknown> {
  const given = args ?? {};
  if (typeof given !== 'object' || Array.isArray(given)) throw new BadRequestError(`${tool}: arguments must be an object`);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    const arg = spec.properties[name];
    if (!arg) throw new BadRequestError(`${tool}: unknown argument ${JSON.stringify(name.slice(0, 64))}`, { hint: `${tool} takes ${Object.keys(spec.properties).join(', ')}` });
    if (value === undefined || value === null) continue;
    out[name] = checkArg(`${tool}: ${name}`, arg, value);
  }
  const missing = spec.required.filter((name) => out[name] === undefined);
  if (missing.length) throw new BadRequestError(`${tool}: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} required`);
  return out;
}

function checkArg(what: string, arg: ArgSpec, value: unknown): unknown {
  if (arg.type === 'string') {
    if (typeof value !== 'string') throw new BadRequestError(`${what} must be a string`);
    if (value.length > arg.maxLength) throw new BadRequestError(`${what} is ${value.length} characters; at most ${arg.maxLength}`);
    if (arg.enum && !arg.enum.includes(value)) throw new BadRequestError(`${what} must be one of ${arg.enum.join(', ')}, got ${JSON.stringify(value.slice(0, 64))}`);
    return value;
  }
  if (arg.type === 'integer') return checkInt(what, value, arg.minimum, arg.maximum);
  if (!Array.isArray(value) || value.length < arg.minItems || value.length > arg.maxItems) {
    throw new BadRequestError(`${what} must be an array of ${arg.minItems === arg.maxItems ? arg.minItems : `${arg.minItems} to ${arg.maxItems}`} integers`);
  }
  return value.map((v) => checkInt(what, v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
}

function checkInt(what: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new BadRequestError(`${what} must be an integer`);
  if (value < min || value > max) throw new BadRequestError(`${what} must be from ${min} to ${max}, got ${value}`);
  return value;
}

/** Common arguments, described once. */
export const ENTITY_ARG: ArgSpec = { type: 'string', description: 'the entity: its name, its id, or a unique id prefix of 4+ characters (list_entities shows them)', maxLength: 200 };
export const CURSOR_ARG: ArgSpec = { type: 'string', description: 'the cursor a previous result of this tool gave, to read its next page', maxLength: 1000 };
