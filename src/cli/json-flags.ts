import { type Command, Option } from 'commander';
import { BadRequestError } from '../core/errors.js';
import { type JqProgram, parseJq, runJq, unknownField } from './jq.js';

/**
 * gh's JSON flags (`cmdutil/json_flags.go`) for every command that has `--json`, added in one
 * place: `--json FIELDS` keeps only those fields (of each item, for a list) and `--jq EXPR`
 * filters the document with a small jq subset (jq.ts). `--json` alone prints the whole document.
 */
export interface JsonFilter {
  fields?: string[];
  jq?: JqProgram;
}

const FIELD_LIST = /^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * `--json a,b` and `--json=a,b` become `--json --json-fields a,b`. Only a field list is taken as
 * FIELDS, so `mgpt ask --json "what is 2+2"` keeps its text; `--json ada` reads ada as a field
 * (gh does the same), so arguments go before `--json FIELDS`.
 */
export function splitJsonFields(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') return [...out, ...argv.slice(i)];
    if (a.startsWith('--json=')) out.push('--json', '--json-fields', a.slice('--json='.length));
    else if (a === '--json' && i + 1 < argv.length && FIELD_LIST.test(argv[i + 1])) out.push('--json', '--json-fields', argv[++i]);
    else out.push(a);
  }
  return out;
}

/** Gives every command with `--json` the FIELDS form and `--jq`. */
export function addJsonFlags(commands: Command[]): void {
  for (const cmd of commands) {
    const json = cmd.options.find((o) => o.long === '--json');
    if (!json) continue;
    // Only the help's spelling changes: splitJsonFields hands FIELDS over, so `--json` itself never takes a value.
    json.flags = '--json [fields]';
    json.description += '; FIELDS (a,b) keeps only those';
    cmd.addOption(new Option('--json-fields <fields>').hideHelp());
    cmd.option('--jq <expression>', 'filter the JSON output: .field, .a.b, .[N], .[], .[] | .field, length, keys (a jq subset)');
  }
}

/** What `--json FIELDS` and `--jq` ask of the command being run (or of a parent, as `logs show` reads `logs --json`); checked before it runs. */
export function jsonFilterFor(cmd: Command): JsonFilter | undefined {
  let json: unknown;
  let fields: unknown;
  let jq: unknown;
  for (let c: Command | null = cmd; c; c = c.parent) {
    const o = c.opts();
    json ??= o.json;
    fields ??= o.jsonFields;
    jq ??= o.jq;
  }
  if (fields === undefined && jq === undefined) return undefined;
  if (!json) throw new BadRequestError('--jq works on JSON output', { hint: 'add --json' });
  const filter: JsonFilter = {};
  if (typeof fields === 'string') {
    if (!FIELD_LIST.test(fields)) throw new BadRequestError(`--json fields must be names separated by commas, got ${JSON.stringify(fields)}`);
    filter.fields = fields.split(',');
  }
  if (typeof jq === 'string') filter.jq = parseJq(jq);
  return filter;
}

/** The document as `filter` shapes it, ready for stdout: strings bare from --jq, other values as JSON. */
export function filteredJson(value: unknown, filter: JsonFilter, tty: boolean): string {
  const picked = filter.fields ? pickFields(value, filter.fields) : value;
  if (!filter.jq) return JSON.stringify(picked, null, 2) + '\n';
  // As gh: strings print bare, one value a line; JSON is indented on a terminal, compact in a pipe.
  return runJq(filter.jq, picked)
    .map((v) => (typeof v === 'string' ? v : JSON.stringify(v, null, tty ? 2 : undefined)) + '\n')
    .join('');
}

/**
 * Only `fields` of an object, or of each item of a list (an array, or a list object's `data`,
 * which then prints as the array of items, as gh's lists do). A field the output lacks is a usage
 * error listing those it has.
 */
export function pickFields(value: unknown, fields: string[]): unknown {
  const items = Array.isArray(value) ? value : isRecord(value) && Array.isArray(value.data) ? value.data : undefined;
  if (items) {
    const available = [...new Set(items.flatMap((i) => (isRecord(i) ? Object.keys(i) : [])))];
    if (items.length) check(fields, available);
    return items.map((i) => (isRecord(i) ? pick(i, fields) : i));
  }
  if (!isRecord(value)) throw new BadRequestError('--json FIELDS needs an object or a list of objects');
  check(fields, Object.keys(value));
  return pick(value, fields);
}

function check(fields: string[], available: string[]): void {
  const missing = fields.find((f) => !available.includes(f));
  if (missing !== undefined) throw unknownField(missing, available);
}

function pick(o: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((f) => f in o).map((f) => [f, o[f]]));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
