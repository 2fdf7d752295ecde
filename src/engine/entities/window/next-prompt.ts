import type { EntityWindowPrompt, PromptPart } from '../../../core/wire/rotation-types.js';
import { loadTokenEstimator } from '../../../core/text/tokens.js';
import type { BlockRow, EntityRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import { pinnedMemory } from '../memory.js';
import { recallInView } from './recall-in-view.js';
import { promptMessages } from './turn-window.js';
import { windowOf } from './load-window.js';

/**
 * The request the entity's next turn sends before its new message, built by the function every
 * turn's request is built with (so what `mgpt window` shows cannot drift from what is sent), and
 * each of its parts with its tokens.
 */
export async function nextPrompt(deps: EngineDeps, entity: EntityRow, blocks: BlockRow[]): Promise<Pick<EntityWindowPrompt, 'prompt_tokens' | 'parts' | 'prompt'>> {
  const memory = await pinnedMemory(deps, entity.id);
  // The new message is not known yet: the request is built with an empty one, which is then left out.
  const head = await windowOf(deps, entity.id, blocks.slice());
  const prompt = promptMessages(entity.instructions, { head, userBlock: { content: '' } }, memory).slice(0, -1);
  const recalled = await recallInView(deps, entity.id, prompt);
  const parts: EntityWindowPrompt['parts'] = {
    instructions: { tokens: entity.instructions ? entity.instructionsTokens : 0, blocks: entity.instructions ? 1 : 0 },
    // Counted exactly: a turn counts the heading and labels with a bound, so as not to wait for the tokenizer.
    memory: { tokens: memory ? (await loadTokenEstimator()).count(memory.text) : 0, blocks: memory?.blocks.length ?? 0 },
    summaries: blockPart(blocks, 'summary'),
    messages: blockPart(blocks, 'message'),
    recalled: { tokens: recalled.tokens, blocks: recalled.lines.length, lines: recalled.lines },
  };
  const prompt_tokens = Object.values(parts).reduce((n, p: PromptPart) => n + p.tokens, 0);
  return { prompt_tokens, parts, prompt };
}

function blockPart(blocks: readonly BlockRow[], kind: BlockRow['kind']): PromptPart {
  const of = blocks.filter((b) => b.kind === kind);
  return { tokens: of.reduce((n, b) => n + b.tokens, 0), blocks: of.length };
}
