import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { ModelRoute } from '../core/models.js';
import { dataDir } from '../config/config.js';
import type { CliContext } from './context.js';
import { warn } from './output.js';

/**
 * Which provider answers an entity depends on the profile (its `models` routes), so the same
 * entity can be answered by llama under one profile and by echo under another. The engine stores
 * no provider per turn (an entity turn writes a log record only when it recalls), so the CLI
 * remembers, per entity, the route that last answered it in the data directory: a small file,
 * read and written only by turns on the local backend (a server's routes are its own and fixed).
 */
const FILE = 'entity-routes.json';

/** `openai gpt-4o-mini`, `llama stories260K.gguf`, `echo`: the provider and the model it is asked for. */
export function routeText(route: ModelRoute): string {
  const model = route.provider === 'llama' ? (route.gguf ? basename(route.gguf) : undefined) : route.provider === 'echo' ? undefined : route.model;
  return model ? `${route.provider} ${model}` : route.provider;
}

/** The route a platform model id takes in this process, as text; undefined on a remote backend. */
export function localRouteText(ctx: CliContext, model: string): string | undefined {
  const s = ctx.settings();
  return s.backend === 'local' ? routeText(s.route(model)) : undefined;
}

/** Before a turn on the local backend: one `warning:` line when another route answered the entity last. */
export async function checkRoute(ctx: CliContext, entity: { id: string; model: string; name?: string }): Promise<void> {
  const changed = await routeChange(ctx, entity);
  if (changed) warn(ctx, changed);
}

/**
 * What to say when the entity was last answered by another route than the one about to answer
 * (undefined when the same, or never seen), remembering this one.
 */
export async function routeChange(ctx: CliContext, entity: { id: string; model: string; name?: string }): Promise<string | undefined> {
  const now = localRouteText(ctx, entity.model);
  if (now === undefined) return undefined;
  const file = join(dataDir(ctx.env), FILE);
  const seen = readRoutes(file);
  const before = seen[entity.id];
  if (before === now) return undefined;
  seen[entity.id] = now;
  await writeRoutes(file, seen).catch(() => undefined); // a hint's memory is not worth failing a turn
  if (before === undefined) return undefined;
  return `${entity.name || entity.id.slice(0, 8)} was last answered by ${before}; ${now} answers it now (profile ${ctx.settings().profile})`;
}

function readRoutes(file: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

async function writeRoutes(file: string, routes: Record<string, string>): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(routes) + '\n');
  await rename(tmp, file);
}
