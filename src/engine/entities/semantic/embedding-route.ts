import { ConfigError } from '../../../core/errors.js';
import { type ModelRoute, providerModelProblem } from '../../../core/models.js';

/**
 * Why a route's `embeddings` cannot work, as a ConfigError, or nothing when it can (or the route
 * has none). Checked by the engine, so a setting from a config file, an environment override or an
 * embedder's caller is refused alike, before anything is sent.
 */
export function checkEmbeddingRoute(modelId: string, route: ModelRoute): void {
  const e = route.embeddings;
  if (!e) return;
  const refuse = (why: string, hint: string) => {
    throw new ConfigError(`model ${modelId}: embeddings ${why}`, { hint });
  };
  const key = `models.${modelId}.embeddings`;
  if (route.provider === 'openai') {
    if (!e.model) refuse('need the embedding model the provider runs', `set one: mgpt config set ${key}.model nomic-embed-text`);
    const problem = e.model && providerModelProblem(e.model);
    if (problem) refuse(`model ${problem}`, `see: mgpt config set ${key}.model NAME`);
    if (e.gguf) refuse('gguf is for llama routes; this route is openai', `remove it: mgpt config unset ${key}.gguf`);
    if (!e.baseUrl && !route.baseUrl) refuse('need a server: the route has no base URL', `set one: mgpt config set ${key}.baseUrl http://127.0.0.1:8081/v1`);
    if (e.dimensions !== undefined && !(Number.isSafeInteger(e.dimensions) && e.dimensions > 0)) refuse(`dimensions must be a positive integer, not ${JSON.stringify(e.dimensions)}`, `see: mgpt config set ${key}.dimensions 256`);
    return;
  }
  if (route.provider === 'llama') {
    if (e.model || e.baseUrl || e.dimensions !== undefined) refuse('model, baseUrl and dimensions are for openai routes; a llama route embeds with a GGUF file', `set ${key}.gguf (or leave it unset to use the route's own GGUF)`);
    if (!e.gguf && !route.gguf) refuse('need a GGUF file: the route has none', `set one: mgpt config set ${key}.gguf PATH`);
    return;
  }
  refuse(`are not offered by the ${route.provider} provider`, `remove them (mgpt config unset ${key}.model), or route the model to an openai or llama provider`);
}
