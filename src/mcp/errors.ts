import { MgptError } from '../core/errors.js';

/** What a refused call says, in the CLI's terms: its code, HTTP status, exit code, message and hint. */
export interface ErrorFields {
  code: string;
  status: number;
  exit_code: number;
  message: string;
  hint?: string;
}

export function errorFields(err: unknown): ErrorFields {
  if (err instanceof MgptError) return { code: err.code, status: err.status, exit_code: err.exitCode, message: err.message, ...(err.hint ? { hint: err.hint } : {}) };
  return { code: 'internal', status: 500, exit_code: 1, message: `internal error: ${err instanceof Error ? err.message : String(err)}` };
}

/**
 * A tool's failure as an MCP tool error (`isError`), which the model reads and can act on:
 * `error (code): message` and the hint the CLI would print, with the same in structured fields.
 */
export function toolError(err: unknown): { isError: true; content: Array<{ type: 'text'; text: string }>; structuredContent: { error: ErrorFields } } {
  const f = errorFields(err);
  const text = `error (${f.code}): ${f.message}${f.hint ? `\nhint: ${f.hint}` : ''}`;
  return { isError: true, content: [{ type: 'text', text }], structuredContent: { error: f } };
}
