import { ProviderError } from '../../core/errors.js';

type Llama = import('node-llama-cpp').Llama;
type LlamaGrammar = import('node-llama-cpp').LlamaGrammar;

const ANNOTATIONS = ['description', 'title', 'default', 'examples', '$schema', '$id', '$comment'];
/** What node-llama-cpp's JSON-schema grammar enforces; it silently ignores every other keyword. */
const ENFORCED = [
  'type', 'properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties',
  'items', 'prefixItems', 'minItems', 'maxItems', 'enum', 'const', 'oneOf', 'anyOf', '$defs', '$ref',
  'minLength', 'maxLength', 'format',
];
const KNOWN = new Set([...ENFORCED, ...ANNOTATIONS]);
const BASIC_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const FORMATS = new Set(['date-time', 'time', 'date']);

const HINT =
  'the llama provider turns the schema into a grammar, which supports type, properties, items, enum, const, ' +
  'oneOf/anyOf, $defs with "#/$defs/..." refs, min/max lengths, items and properties, and format date, time, date-time; ' +
  'simplify the schema, or route this model to an online provider';

/**
 * Where a schema asks for something the grammar would not enforce: a list of `path: problem`.
 * Ignoring such a keyword would pass off unconstrained output as conforming, so it is refused.
 */
export function schemaProblems(schema: unknown, path = '$', defs: Record<string, unknown> = {}): string[] {
  if (schema === true || (typeof schema === 'object' && schema !== null && Object.keys(schema).length === 0)) return [];
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return [`${path}: not a schema object`];
  const s = schema as Record<string, unknown>;
  const scope = { ...defs, ...((s.$defs as Record<string, unknown> | undefined) ?? {}) };
  const problems = Object.keys(s)
    .filter((k) => !KNOWN.has(k))
    .map((k) => `${path}: "${k}" is not enforced`);
  problems.push(...typeProblems(s.type, path));
  if (typeof s.format === 'string' && !FORMATS.has(s.format)) problems.push(`${path}: format "${s.format}" is not enforced`);
  if (typeof s.$ref === 'string') {
    const name = s.$ref.startsWith('#/$defs/') ? s.$ref.slice('#/$defs/'.length) : undefined;
    if (name === undefined || !(name in scope)) problems.push(`${path}: $ref "${s.$ref}" does not name an entry of $defs`);
  }
  const children: [string, unknown][] = [
    ...Object.entries((s.properties as Record<string, unknown> | undefined) ?? {}).map(([k, v]): [string, unknown] => [`${path}.${k}`, v]),
    ...Object.entries((s.$defs as Record<string, unknown> | undefined) ?? {}).map(([k, v]): [string, unknown] => [`${path}.$defs.${k}`, v]),
    ...[...((s.oneOf as unknown[]) ?? []), ...((s.anyOf as unknown[]) ?? [])].map((v, i): [string, unknown] => [`${path}[alt ${i}]`, v]),
    ...((s.prefixItems as unknown[]) ?? []).map((v, i): [string, unknown] => [`${path}[${i}]`, v]),
  ];
  if (s.items !== undefined) children.push([`${path}[]`, s.items]);
  if (typeof s.additionalProperties === 'object') children.push([`${path}.*`, s.additionalProperties]);
  for (const [p, child] of children) problems.push(...schemaProblems(child, p, scope));
  return problems;
}

function typeProblems(type: unknown, path: string): string[] {
  if (type === undefined || type === 'object' || type === 'array') return [];
  const types = Array.isArray(type) ? type : [type];
  // A list of types is a grammar alternative only among the plain ones.
  const ok = types.every((t) => typeof t === 'string' && BASIC_TYPES.has(t));
  return ok ? [] : [`${path}: type ${JSON.stringify(type)} is not enforced (a list may hold only string, number, integer, boolean, null)`];
}

/** The schema as node-llama-cpp takes it: `anyOf` is its `oneOf` (a grammar only needs one branch to match). */
export function toGbnfSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toGbnfSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.includes(k) && k !== 'description') continue;
    if (k === 'anyOf') out.oneOf = [...((out.oneOf as unknown[]) ?? []), ...(toGbnfSchema(v) as unknown[])];
    else if (k === 'properties' || k === '$defs') {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, sub]) => [name, toGbnfSchema(sub)]));
    } else out[k] = toGbnfSchema(v);
  }
  return out;
}

/** Refuses a schema the grammar cannot enforce, naming every place it falls short. */
export function assertEnforceable(schema: unknown, what: string): void {
  const problems = schemaProblems(schema);
  if (problems.length) {
    throw new ProviderError(`${what} cannot be enforced on a llama model: ${problems.join('; ')}`, { status: 400, hint: HINT });
  }
}

/** What OpenAI's `response_format` asks of the reply, as a schema or the generic JSON object grammar. */
export type OutputContract = { kind: 'json_schema'; schema: unknown } | { kind: 'json_object' };

/** Reads `response_format`; `text` and none mean free text. */
export function outputContract(responseFormat: Record<string, unknown> | undefined): OutputContract | undefined {
  if (!responseFormat || responseFormat.type === 'text') return undefined;
  if (responseFormat.type === 'json_object') return { kind: 'json_object' };
  if (responseFormat.type === 'json_schema') {
    const schema = (responseFormat.json_schema as { schema?: unknown } | undefined)?.schema;
    if (schema === undefined) {
      throw new ProviderError('response_format json_schema has no json_schema.schema', {
        status: 400,
        hint: 'send { type: "json_schema", json_schema: { name, schema: {...} } }',
      });
    }
    assertEnforceable(schema, 'the response_format schema');
    return { kind: 'json_schema', schema };
  }
  throw new ProviderError(`response_format type ${JSON.stringify(responseFormat.type)} is not one the llama provider knows`, {
    status: 400,
    hint: 'use "text", "json_object" or "json_schema"',
  });
}

/** Grammars per llama instance and schema text: building one parses the schema into GBNF each time. */
export class GrammarCache {
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  constructor(private readonly llama: Llama) {}

  get(contract: OutputContract): Promise<LlamaGrammar> {
    const key = contract.kind === 'json_object' ? '\0json' : JSON.stringify(contract.schema);
    let g = this.grammars.get(key);
    if (!g) {
      g = this.build(contract);
      this.grammars.set(key, g);
      g.catch(() => this.grammars.delete(key));
    }
    return g.catch((err: unknown) => {
      throw new ProviderError(`node-llama-cpp cannot build a grammar for this response_format: ${(err as Error).message}`, {
        status: 400,
        hint: HINT,
        cause: err,
      });
    });
  }

  private build(contract: OutputContract): Promise<LlamaGrammar> {
    return contract.kind === 'json_object'
      ? this.llama.getGrammarFor('json')
      : this.llama.createGrammarForJsonSchema(toGbnfSchema(contract.schema) as never);
  }
}
