import { BadRequestError } from '../core/errors.js';

/**
 * A small subset of jq for `--jq` (gh's flag), so no jq library ships with mgpt: `.`, `.field`,
 * `.a.b`, `."any key"`, `.["any key"]`, `.[N]` (negative counts from the end), `.[]`, `.field?`,
 * any chain of those (`.data[0].id`, `.data[].name`), `length`, `keys`, and `|` between them.
 * One difference: a field an object lacks is an error that lists the fields it has (jq prints
 * null); `.field?` gives null instead.
 */
export type JqProgram = Step[][];

type Step =
  | { kind: 'field'; name: string; optional: boolean }
  | { kind: 'index'; index: number }
  | { kind: 'each' }
  | { kind: 'length' }
  | { kind: 'keys' };

export const JQ_SUBSET = '., .field, .a.b, .["key"], .[N], .[], .field?, length, keys, and | between them';

/** Parses an expression of the subset; anything else is a usage error naming what is supported. */
export function parseJq(source: string): JqProgram {
  return source.split(/\|(?=(?:[^"]*"[^"]*")*[^"]*$)/).map((part) => parseTerm(part.trim(), source));
}

function parseTerm(term: string, source: string): Step[] {
  const bad = () => new BadRequestError(`--jq: cannot read ${JSON.stringify(term || source)}: mgpt's --jq understands ${JQ_SUBSET}`);
  if (term === 'length' || term === 'keys') return [{ kind: term }];
  if (!term.startsWith('.')) throw bad();
  const steps: Step[] = [];
  let i = term === '.' ? 1 : 0;
  const name = /^\.([A-Za-z_][A-Za-z0-9_]*)(\?)?/;
  const quoted = /^\.?("(?:[^"\\]|\\.)*")(\?)?/;
  const bracket = /^\.?\[\s*(?:(-?\d+)|("(?:[^"\\]|\\.)*"))?\s*\]/;
  while (i < term.length) {
    const rest = term.slice(i);
    let m: RegExpExecArray | null;
    if ((m = name.exec(rest))) steps.push({ kind: 'field', name: m[1], optional: m[2] === '?' });
    else if ((m = quoted.exec(rest)) && rest.startsWith('."')) steps.push({ kind: 'field', name: JSON.parse(m[1]) as string, optional: m[2] === '?' });
    else if ((m = bracket.exec(rest)) && (i > 0 || rest.startsWith('.'))) {
      if (m[1] !== undefined) steps.push({ kind: 'index', index: Number(m[1]) });
      else if (m[2] !== undefined) steps.push({ kind: 'field', name: JSON.parse(m[2]) as string, optional: false });
      else steps.push({ kind: 'each' });
    } else throw bad();
    i += m[0].length;
  }
  return steps;
}

/** Every value the program yields for `input`, in order (`.[]` yields several). */
export function runJq(program: JqProgram, input: unknown): unknown[] {
  let values = [input];
  for (const term of program) {
    for (const step of term) values = values.flatMap((v) => apply(step, v));
  }
  return values;
}

function apply(step: Step, v: unknown): unknown[] {
  const what = v === null ? 'null' : Array.isArray(v) ? 'an array' : `a${typeof v === 'object' ? 'n' : ''} ${typeof v}`;
  switch (step.kind) {
    case 'field': {
      if (v === null) return [null];
      if (typeof v !== 'object' || Array.isArray(v)) throw new BadRequestError(`--jq: cannot take .${step.name} of ${what}`);
      if (step.name in v) return [(v as Record<string, unknown>)[step.name]];
      if (step.optional) return [null];
      throw unknownField(step.name, Object.keys(v));
    }
    case 'index':
      if (v === null) return [null];
      if (!Array.isArray(v)) throw new BadRequestError(`--jq: cannot take [${step.index}] of ${what}`);
      return [v.at(step.index) ?? null];
    case 'each':
      if (Array.isArray(v)) return v;
      if (v !== null && typeof v === 'object') return Object.values(v);
      throw new BadRequestError(`--jq: cannot iterate over ${what}`);
    case 'length':
      if (v === null) return [0];
      if (typeof v === 'string' || Array.isArray(v)) return [v.length];
      if (typeof v === 'object') return [Object.keys(v).length];
      if (typeof v === 'number') return [Math.abs(v)];
      throw new BadRequestError(`--jq: ${what} has no length`);
    case 'keys':
      if (Array.isArray(v)) return [v.map((_, i) => i)];
      if (v !== null && typeof v === 'object') return [Object.keys(v).sort()];
      throw new BadRequestError(`--jq: ${what} has no keys`);
  }
}

/** A field the output does not have: exit 2, listing the ones it has. */
export function unknownField(name: string, available: string[]): BadRequestError {
  return new BadRequestError(`unknown JSON field ${JSON.stringify(name)}`, {
    hint: available.length ? `available fields: ${available.join(', ')}` : 'the output has no fields here',
  });
}
