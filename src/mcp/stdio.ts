import { type McpOptions, createMcpServer } from './mcp-server.js';

/**
 * The largest message read from stdin: a client's message past it closes the connection (the
 * SDK's reader cannot skip it), so it is far above what any argument may hold (1,000,000
 * characters of content, refused with a tool error past that).
 */
export const STDIO_MAX_MESSAGE = 64 * 1024 * 1024;

/** `mgpt mcp`: serves one client on stdin/stdout until it closes stdin or `signal` aborts. */
export async function runStdio(o: McpOptions, signal: AbortSignal): Promise<void> {
  const sdk = await import('./sdk.js');
  const { server, close } = await createMcpServer(o);
  const transport = new sdk.StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: STDIO_MAX_MESSAGE });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.connect(transport);
  await closed;
  close();
  await server.close().catch(() => undefined);
}
