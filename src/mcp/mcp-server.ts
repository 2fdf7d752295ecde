import type { Backend } from '../core/backend.js';
import { ForbiddenError, MgptError, NotFoundError } from '../core/errors.js';
import { inputSchema, parseArgs } from './args.js';
import { errorFields, toolError } from './errors.js';
import { memory } from './memory-tool.js';
import { listEntities, listRotations, readTranscript, readWindow, recall, search } from './read-tools.js';
import { RESOURCE_TEMPLATES, listResources, readResource } from './resources.js';
import type { Change, Tool } from './tool.js';
import { Watcher } from './watcher.js';
import { append, send } from './write-tools.js';

type Sdk = typeof import('./sdk.js');
type McpServer = InstanceType<Sdk['Server']>;

export interface McpOptions {
  backend: Backend;
  /** Offer `send` (a model call, billed): `mgpt mcp --allow-send`, `mgpt serve --mcp-allow-send`. */
  allowSend: boolean;
  /** The key's scopes on `mgpt serve`; undefined for the CLI's own backend (its key, if any, is checked by the server). */
  scopes?: readonly string[];
  /** Offer resource subscriptions (a client that stays connected: stdio). */
  subscriptions: boolean;
  version: string;
}

/** The scope every entity route needs; MCP calls are entity calls. */
export const MCP_SCOPE = 'mgpt.responses:create';

export const INSTRUCTIONS =
  'mgpt keeps entities: long-lived conversations whose transcript is kept forever, with a bounded window, pinned memory and ranked recall. ' +
  'Find an entity with list_entities; answer from its past with recall (ranked) or search (exact words); read_transcript and read_window read it; ' +
  'memory edits the pinned memory its model sees on every turn; append records an exchange without a model call.';

export function toolsFor(o: Pick<McpOptions, 'allowSend'>): Tool[] {
  return [listEntities, recall, search, readTranscript, readWindow, listRotations, memory, append, ...(o.allowSend ? [send] : [])];
}

/** The MCP server over a backend: its tools, its resources, and (with `subscriptions`) change notices. */
export async function createMcpServer(o: McpOptions): Promise<{ server: McpServer; close(): void }> {
  const sdk: Sdk = await import('./sdk.js');
  const server = new sdk.Server(
    { name: 'mgpt', title: 'mgpt memory', version: o.version },
    { capabilities: { tools: {}, resources: { subscribe: o.subscriptions, listChanged: o.subscriptions } }, instructions: INSTRUCTIONS },
  );
  const watcher = o.subscriptions ? new Watcher(o.backend, (uri) => server.sendResourceUpdated({ uri }), () => server.sendResourceListChanged()) : undefined;
  const changed = (c: Change) => watcher?.changed(c);
  handleTools(sdk, server, o, changed);
  handleResources(sdk, server, o, watcher);
  return { server, close: () => watcher?.stop() };
}

function handleTools(sdk: Sdk, server: McpServer, o: McpOptions, changed: (c: Change) => void): void {
  const tools = toolsFor(o);
  const byName = new Map(tools.map((t) => [t.name, t]));
  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name, title: t.title, description: t.description, inputSchema: inputSchema(t.args),
      annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: t.destructive === true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(sdk.CallToolRequestSchema, async (req, extra) => {
    const tool = byName.get(req.params.name);
    if (!tool) throw rpcError(sdk.ErrorCode.InvalidParams, unknownTool(req.params.name, o));
    try {
      requireScope(o);
      const args = parseArgs(tool.name, tool.args, req.params.arguments);
      const r = await tool.run({ backend: o.backend, changed, signal: extra.signal }, args);
      return { content: [{ type: 'text' as const, text: r.text }], ...(r.structured ? { structuredContent: r.structured } : {}) };
    } catch (err) {
      return toolError(err);
    }
  });
}

function unknownTool(name: string, o: McpOptions): string {
  const shown = JSON.stringify(name.slice(0, 64));
  if (name === 'send' && !o.allowSend) return `tool ${shown} is not offered: this server was started without --allow-send (mgpt mcp --allow-send, mgpt serve --mcp-allow-send), as send calls the entity's model and is billed`;
  return `unknown tool ${shown}; the tools are ${toolsFor(o).map((t) => t.name).join(', ')}`;
}

function requireScope(o: McpOptions): void {
  if (o.scopes && !o.scopes.includes(MCP_SCOPE)) throw new ForbiddenError(`the API key lacks the scope ${MCP_SCOPE}`, { hint: `create a key with it: mgpt keys create --account ACCOUNT --scopes ${MCP_SCOPE}` });
}

function handleResources(sdk: Sdk, server: McpServer, o: McpOptions, watcher: Watcher | undefined): void {
  const guarded = <T>(run: () => Promise<T>) => async (): Promise<T> => {
    try {
      requireScope(o);
      return await run();
    } catch (err) {
      throw resourceError(sdk, err);
    }
  };
  server.setRequestHandler(sdk.ListResourceTemplatesRequestSchema, () => guarded(async () => ({ resourceTemplates: RESOURCE_TEMPLATES }))());
  server.setRequestHandler(sdk.ListResourcesRequestSchema, (req) => guarded(() => listResources(o.backend, req.params?.cursor))());
  server.setRequestHandler(sdk.ReadResourceRequestSchema, (req) => guarded(() => readResource(o.backend, req.params.uri))());
  if (!watcher) return;
  server.setRequestHandler(sdk.SubscribeRequestSchema, (req) => guarded(async () => (await watcher.subscribe(req.params.uri), {}))());
  server.setRequestHandler(sdk.UnsubscribeRequestSchema, (req) => guarded(async () => (watcher.unsubscribe(req.params.uri), {}))());
}

/** A resource request's failure as a JSON-RPC error: MCP's "resource not found" for a 404, with the CLI's fields as data. */
function resourceError(sdk: Sdk, err: unknown): Error {
  const f = errorFields(err);
  const code = err instanceof NotFoundError ? -32002 : err instanceof MgptError && err.status < 500 ? sdk.ErrorCode.InvalidParams : sdk.ErrorCode.InternalError;
  return rpcError(code, `${f.message}${f.hint ? ` (hint: ${f.hint})` : ''}`, f);
}

/** A JSON-RPC error the SDK sends as it is (its McpError would put "MCP error N:" in the message, which the client adds again). */
function rpcError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}
