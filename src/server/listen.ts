import { type ServerType, serve } from '@hono/node-server';
import { Engine, type EngineOptions } from '../engine/engine.js';
import { type AppOptions, createApp } from './app.js';

export interface Listening {
  url: string;
  close(): Promise<void>;
}

/** The socket listener: a few lines around the pure app. Port 0 picks a free port. */
export function listen(engine: Engine | EngineOptions, host: string, port: number, opts: AppOptions = {}): Promise<Listening> {
  const own = !(engine instanceof Engine);
  const eng = engine instanceof Engine ? engine : new Engine(engine);
  const app = createApp(eng, opts);
  return new Promise((resolve, reject) => {
    let server: ServerType;
    try {
      server = serve({ fetch: app.fetch, hostname: host, port }, (info) => {
        const shown = info.address.includes(':') ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${shown}:${info.port}`,
          close: () =>
            new Promise<void>((r) => {
              server.close(() => {
                if (own) eng.close();
                r();
              });
              // Keep-alive sockets would hold close() open; streams in flight are cut (their turns leave no trace).
              (server as import('node:http').Server).closeAllConnections?.();
            }),
        });
      });
    } catch (err) {
      reject(err);
      return;
    }
    server.on('error', reject);
  });
}
