import { BadRequestError, type FieldError } from '../errors.js';
import { type CreateUniverseInput, type ImageRequest, OVERRIDABLE_ALIAS, type RespondInput, TEXT_ALIASES } from './universe-types.js';

/**
 * The one validator of the universe contract's request bodies (seed 000): POST /universes,
 * /responses and /images. The server's routes and the CLI parse a body here once, into the typed
 * input the Backend takes; the engine runs the same check on what an embedder hands it, so the
 * local and remote backends refuse exactly the same input. Every problem becomes one
 * `{ field, message }` of a single 400.
 */

const FIELDS = new Set([
  'model',
  'modelOverride',
  'userInput',
  'universe',
  'universeDoc',
  'statePointer',
  'requestId',
  'gameId',
  'workspacePreview',
  'useStructuredOutput',
  'useAdditionalInstructions',
  'responseFormat',
  'tools',
  'toolChoice',
  'toolResults',
]);
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const REQUEST_ID_MAX = 200;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Fields the gateway sets from the caller's key; a universe request that carries one is refused. */
const GATEWAY_FIELDS = new Set(['userId', 'usageForward']);

type Report = (field: string, message: string) => void;

/** The one rule for the fields of a universe request body (responses, universes, images): known ones only, none the gateway sets. */
function checkFields(body: Record<string, unknown>, known: ReadonlySet<string>, err: Report): void {
  for (const key of Object.keys(body)) {
    if (GATEWAY_FIELDS.has(key)) err(key, 'is set by the gateway; clients must not send it');
    else if (!known.has(key)) err(key, 'unknown field');
  }
}

/** A POST /responses body, checked. */
export function parseRespond(body: unknown): RespondInput {
  if (!isObject(body)) throw new BadRequestError('the request body must be a JSON object');
  const errors: FieldError[] = [];
  const err: Report = (field, message) => errors.push({ field, message });
  checkFields(body, FIELDS, err);
  const b = body as Record<string, unknown>;
  checkModel(b, err);
  checkTarget(b, err);
  checkOptions(b, err);
  checkTools(b, err);
  if (b.toolChoice !== undefined) b.toolChoice = checkToolChoice(b.toolChoice, b.tools, err);
  checkToolResults(b, err);
  refuse(errors);
  return b as unknown as RespondInput;
}

function checkModel(b: Record<string, unknown>, err: Report): void {
  if (typeof b.model !== 'string' || !(TEXT_ALIASES as readonly string[]).includes(b.model)) {
    err('model', `required; one of ${TEXT_ALIASES.join(', ')}`);
  }
  if (b.modelOverride === undefined) return;
  if (typeof b.modelOverride !== 'string' || b.modelOverride === '') err('modelOverride', 'must be a non-empty string');
  else if (b.model !== OVERRIDABLE_ALIAS) err('modelOverride', `is allowed only with ${OVERRIDABLE_ALIAS}`);
}

/** The input and where the turn happens: a stored universe, an inline document, or neither. */
function checkTarget(b: Record<string, unknown>, err: Report): void {
  const hasResults = Array.isArray(b.toolResults) && b.toolResults.length > 0;
  if (typeof b.userInput !== 'string') err('userInput', 'required: a string');
  else if (b.userInput.trim() === '' && !hasResults) err('userInput', 'must not be empty');
  if (b.universe !== undefined && b.universeDoc !== undefined) err('universe', 'universe and universeDoc are mutually exclusive');
  if (b.universe !== undefined && typeof b.universe !== 'string') err('universe', 'must be a UUID string');
  if (b.universeDoc !== undefined) checkDoc(b.universeDoc, err);
  if (b.statePointer !== undefined) {
    if (!Number.isSafeInteger(b.statePointer) || (b.statePointer as number) < 0) err('statePointer', 'must be an integer >= 0');
    else if (standalone(b)) err('statePointer', 'needs a universe or universeDoc');
  }
}

const standalone = (b: Record<string, unknown>) => b.universe === undefined && b.universeDoc === undefined;

function checkOptions(b: Record<string, unknown>, err: Report): void {
  if (b.requestId !== undefined && (typeof b.requestId !== 'string' || b.requestId === '' || b.requestId.length > REQUEST_ID_MAX)) {
    err('requestId', `must be a string of 1 to ${REQUEST_ID_MAX} characters`);
  }
  if (b.gameId !== undefined && typeof b.gameId !== 'string') err('gameId', 'must be a string');
  for (const f of ['workspacePreview', 'useStructuredOutput', 'useAdditionalInstructions']) {
    if (b[f] !== undefined && typeof b[f] !== 'boolean') err(f, 'must be a boolean');
  }
  if (b.responseFormat !== undefined && !isObject(b.responseFormat)) err('responseFormat', 'must be an object (OpenAI response_format)');
}

function checkTools(b: Record<string, unknown>, err: Report): void {
  if (b.tools === undefined) return;
  if (!Array.isArray(b.tools)) return void err('tools', 'must be an array');
  b.tools.forEach((t, i) => {
    if (!isObject(t) || t.type !== 'function') return err(`tools[${i}].type`, 'must be "function"');
    if (typeof t.name !== 'string' || !TOOL_NAME.test(t.name)) err(`tools[${i}].name`, 'required: letters, digits, _ or -, up to 64');
    if (t.parameters !== undefined && !isObject(t.parameters)) err(`tools[${i}].parameters`, 'must be a JSON schema object');
    if (t.description !== undefined && typeof t.description !== 'string') err(`tools[${i}].description`, 'must be a string');
  });
}

function checkToolResults(b: Record<string, unknown>, err: Report): void {
  if (b.toolResults === undefined) return;
  if (!Array.isArray(b.toolResults)) return void err('toolResults', 'must be an array');
  if (standalone(b) && b.toolResults.length) return void err('toolResults', 'needs a universe or universeDoc');
  b.toolResults.forEach((r, i) => {
    if (!isObject(r)) return err(`toolResults[${i}]`, 'must be an object');
    if (typeof r.callId !== 'string' || r.callId === '') err(`toolResults[${i}].callId`, 'required');
    if (typeof r.name !== 'string' || r.name === '') err(`toolResults[${i}].name`, 'required');
    if (!isObject(r.output)) err(`toolResults[${i}].output`, 'required: an object');
    if (typeof r.ok !== 'boolean') err(`toolResults[${i}].ok`, 'required: a boolean');
  });
}

/**
 * `"auto"`, `"none"`, `"required"`, or a named function in the seed's shape `{type, name}` or the
 * OpenAI wire shape `{type, function: {name}}`, which becomes the seed's. A choice that needs a
 * tool must name one the request defines, so no provider is called for a request that cannot work.
 */
function checkToolChoice(c: unknown, tools: unknown, err: (field: string, message: string) => void): unknown {
  if (c === 'auto' || c === 'none') return c;
  const defined = Array.isArray(tools) ? tools.flatMap((t) => (isObject(t) && typeof t.name === 'string' ? [t.name] : [])) : [];
  if (c === 'required') {
    if (defined.length === 0) err('toolChoice', '"required" needs tools');
    return c;
  }
  const name = isObject(c) && c.type === 'function' ? (isObject(c.function) ? c.function.name : c.name) : undefined;
  if (typeof name !== 'string' || name === '') {
    err('toolChoice', '"auto", "none", "required", or { type: "function", name } ({ type: "function", function: { name } } also works)');
    return c;
  }
  if (!defined.includes(name)) err('toolChoice', `names ${JSON.stringify(name)}, which is not among the tools`);
  return { type: 'function', name };
}

function checkDoc(doc: unknown, err: (field: string, message: string) => void): void {
  if (!isObject(doc)) return err('universeDoc', 'must be an object');
  if (!Array.isArray(doc.conversation)) err('universeDoc.conversation', 'required: an array');
  if (!isObject(doc.runtime) || !Array.isArray(doc.runtime.conversation)) {
    return err('universeDoc.runtime.conversation', 'required: an array');
  }
  const p = doc.prompt;
  if (p !== undefined && (!isObject(p) || (typeof p.text !== 'string' && typeof p.storedPrompt !== 'string'))) {
    err('universeDoc.prompt', 'must hold text or storedPrompt');
  }
  (doc.runtime.conversation as unknown[]).forEach((m, i) => {
    const at = `universeDoc.runtime.conversation[${i}]`;
    if (!isObject(m)) return err(at, 'must be an object');
    if (m.role === 'user' && typeof m.content === 'string') return;
    if (m.role === 'tool' && typeof m.content === 'string' && typeof m.tool_call_id === 'string') return;
    if (m.role === 'assistant' && (typeof m.content === 'string' || (m.content === null && Array.isArray(m.tool_calls)))) {
      if (m.tool_calls === undefined || Array.isArray(m.tool_calls)) return;
    }
    err(at, 'not a user, assistant or tool message in OpenAI chat shape');
  });
}

function refuse(errors: FieldError[], message?: string): void {
  if (errors.length) throw new BadRequestError(message ?? errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

export const DISPLAY_NAME_MAX = 200;
const CREATE_FIELDS = new Set(['storedPrompt', 'displayName']);

/** A POST /universes body, checked. */
export function parseCreateUniverse(body: unknown): CreateUniverseInput {
  if (!isObject(body)) throw new BadRequestError('the request body must be a JSON object');
  const errors: FieldError[] = [];
  const err: Report = (field, message) => errors.push({ field, message });
  checkFields(body, CREATE_FIELDS, err);
  if (typeof body.storedPrompt !== 'string' || body.storedPrompt === '') err('storedPrompt', 'required: the name of a stored prompt');
  if (body.displayName !== undefined && (typeof body.displayName !== 'string' || body.displayName.length > DISPLAY_NAME_MAX)) {
    err('displayName', `a string of at most ${DISPLAY_NAME_MAX} characters`);
  }
  refuse(errors, 'invalid universe');
  return body as unknown as CreateUniverseInput;
}

const IMAGE_SIZES = ['1K', '2K', '4K'] as const;
const IMAGE_FIELDS = new Set(['sceneUid', 'systemPrompt', 'description', 'additionalPrompt', 'referenceImages', 'backgroundReference', 'imageConfig', 'model']);

/** A POST /images body, checked. */
export function parseImage(body: unknown): ImageRequest {
  if (!isObject(body)) throw new BadRequestError('the request body must be a JSON object');
  const errors: FieldError[] = [];
  const err: Report = (field, message) => errors.push({ field, message });
  checkFields(body, IMAGE_FIELDS, err);
  for (const f of ['sceneUid', 'systemPrompt', 'description']) {
    if (typeof body[f] !== 'string' || (body[f] as string).trim() === '') err(f, 'required: a non-empty string');
  }
  if (body.additionalPrompt !== undefined && typeof body.additionalPrompt !== 'string') err('additionalPrompt', 'must be a string');
  if (body.model !== undefined && (typeof body.model !== 'string' || body.model === '')) err('model', 'must be a non-empty string');
  if (body.referenceImages !== undefined) {
    if (!Array.isArray(body.referenceImages)) err('referenceImages', 'must be an array of text and image parts');
    else body.referenceImages.forEach((p, i) => checkPart(p, `referenceImages[${i}]`, err));
  }
  if (body.backgroundReference !== undefined) checkPart(body.backgroundReference, 'backgroundReference', err);
  if (body.imageConfig !== undefined) checkImageConfig(body.imageConfig, err);
  refuse(errors);
  return body as unknown as ImageRequest;
}

function checkImageConfig(c: unknown, err: Report): void {
  if (!isObject(c)) return err('imageConfig', 'must be an object');
  if (c.imageSize !== undefined && !(IMAGE_SIZES as readonly unknown[]).includes(c.imageSize)) err('imageConfig.imageSize', `one of ${IMAGE_SIZES.join(', ')}`);
  if (c.aspectRatio !== undefined && (typeof c.aspectRatio !== 'string' || !/^[1-9]\d{0,2}:[1-9]\d{0,2}$/.test(c.aspectRatio))) {
    err('imageConfig.aspectRatio', 'W:H, such as 16:9');
  }
  for (const k of Object.keys(c)) if (k !== 'imageSize' && k !== 'aspectRatio') err(`imageConfig.${k}`, 'unknown field');
}

function checkPart(p: unknown, at: string, err: Report): void {
  if (!isObject(p)) return err(at, 'must be a part object');
  if (p.type === 'text' && typeof p.text === 'string') return;
  if (p.type === 'image_url' && isObject(p.image_url) && typeof p.image_url.url === 'string' && /^(https?:|data:image\/)/.test(p.image_url.url)) return;
  err(at, '{ type: "text", text } or { type: "image_url", image_url: { url } } (http(s) or data:image/...)');
}
