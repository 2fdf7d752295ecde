import type { ChatModel, ChatRequest, StreamPart } from '../spec.js';

/**
 * The built-in offline provider: deterministic, instant. Replies with the last user message; a
 * summary request gets a short extractive summary (the first words of each line).
 */
export class EchoChatModel implements ChatModel {
  readonly provider = 'echo';
  constructor(readonly modelId: string) {}

  async *stream(request: ChatRequest): AsyncIterable<StreamPart> {
    const text = request.purpose === 'summary' ? summarize(lastUserText(request), request.maxTokens) : lastUserText(request);
    const pieces = text.match(/\s*\S+/g) ?? [];
    for (const piece of pieces) {
      if (request.signal?.aborted) return;
      yield { type: 'text-delta', text: piece };
    }
    yield { type: 'finish', reason: 'stop' };
  }
}

function lastUserText(request: ChatRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return m.content.map((p) => (p.type === 'text' ? p.text : '')).join(' ');
  }
  return '';
}

function summarize(text: string, maxTokens = 256): string {
  const wordsPerLine = 8;
  const budgetWords = Math.max(1, Math.floor(maxTokens * 0.6));
  const out: string[] = [];
  let used = 0;
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/).filter(Boolean).slice(0, wordsPerLine);
    if (words.length === 0) continue;
    if (used + words.length > budgetWords) break;
    out.push(words.join(' '));
    used += words.length;
  }
  return out.join(' / ');
}
