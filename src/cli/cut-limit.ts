import type { CutLimit } from '../ui/finish-notice.js';
import { LLAMA_DEFAULTS } from '../core/models.js';
import type { CliContext } from './context.js';

/**
 * The reply-length limit a turn on `model` ran under, when this process knows the route (the
 * local backend): `requested` (a command's --max-tokens) within the route's maxTokens. A remote
 * server's routes are its own: undefined.
 */
export function cutLimit(ctx: CliContext, model: string, requested?: number): CutLimit | undefined {
  const s = ctx.settings();
  if (s.backend !== 'local') return undefined;
  const route = s.route(model);
  const routeMax = route.maxTokens ?? (route.provider === 'llama' ? LLAMA_DEFAULTS.maxTokens : undefined);
  if (requested !== undefined && (routeMax === undefined || requested <= routeMax)) {
    return { maxTokens: requested, source: '--max-tokens', raise: 'a larger --max-tokens' };
  }
  const name = s.routeName(model);
  // A limit from a profile other than the default one is raised in that profile, so the hint names it.
  const named = s.profile !== 'default';
  return {
    maxTokens: routeMax,
    source: `${named ? `profile ${s.profile}'s ` : ''}models.${name}.maxTokens`,
    raise: `mgpt config set ${named ? `--profile ${s.profile} ` : ''}models.${name}.maxTokens N`,
  };
}
