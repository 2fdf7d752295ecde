import { Hono, type Context } from 'hono';
import type { Engine } from '../../engine/engine.js';
import { type Env, type RouteDeps } from '../route-deps.js';
import { ServedBackend } from '../mcp-backend.js';

export interface McpRouteOptions {
  /** Offer the `send` tool (serve --mcp-allow-send). */
  allowSend: boolean;
  version: string;
}

/**
 * MCP over streamable HTTP at /mcp (docs/mcp.md#http): any valid key connects; each tool needs
 * the scope the entity routes need, so a key without it gets a tool error and changes nothing.
 * Stateless: every POST is served by a server of its own over the key's account, so any replica
 * answers any request (no session to keep), and no stream stays open (GET and DELETE: 405).
 */
export function mcpRoutes(engine: Engine, { auth, limit, body }: RouteDeps, o: McpRouteOptions): Hono<Env> {
  const app = new Hono<Env>();
  app.post('/mcp', auth(null), limit, async (c) => serveOne(engine, c, await body(c), o));
  const refused = (c: Context<Env>) =>
    c.json({ jsonrpc: '2.0', error: { code: -32000, message: 'this server keeps no MCP session: POST each request to /mcp' }, id: null }, 405, { Allow: 'POST' });
  app.get('/mcp', auth(null), refused);
  app.delete('/mcp', auth(null), refused);
  return app;
}

async function serveOne(engine: Engine, c: Context<Env>, parsed: unknown, o: McpRouteOptions): Promise<Response> {
  const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([import('../../mcp/sdk.js'), import('../../mcp/mcp-server.js')]);
  const backend = new ServedBackend(engine, c);
  const { server } = await createMcpServer({ backend, allowSend: o.allowSend, scopes: c.get('principal').scopes, subscriptions: false, version: o.version });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw, { parsedBody: parsed });
  } finally {
    await server.close().catch(() => undefined);
  }
}
