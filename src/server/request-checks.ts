import { BadRequestError } from '../core/errors.js';

/** A query parameter that must be an integer when given (400 naming it otherwise). */
export function queryInt(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new BadRequestError(`${name} must be an integer`, { errors: [{ field: name, message: 'must be an integer' }] });
  }
  return Number(raw);
}

/** A query flag: absent or `false` is off, `true` is on; anything else is a 400 naming it. */
export function queryFlag(raw: string | undefined, name: string): boolean {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new BadRequestError(`${name} must be true or false`, { errors: [{ field: name, message: 'must be true or false' }] });
}

/** A body that must be a JSON object with no fields beyond `allowed` (400 naming them otherwise). */
export function checkFields(b: unknown, allowed: string[]): void {
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new BadRequestError('the request body must be a JSON object');
  const extra = Object.keys(b).filter((k) => !allowed.includes(k));
  if (extra.length) throw new BadRequestError(`unknown fields: ${extra.join(', ')}`);
}
