import type { ChatMessage, ChatModel, ChatRequest, GeneratedImage, ImageGenerationRequest, RouteLimits, StreamPart } from '../spec.js';
import { placeholderPng } from './png.js';

/**
 * The built-in offline provider: deterministic, instant. It replies with the last user message;
 * when the request carries tools and that message names one, it calls the tool instead (arguments
 * `{ "input": <the message> }`); once tool results are the last messages, it reports them; a
 * summary request gets a short extractive summary (the first words of each line); an image
 * request gets a small gradient PNG in the requested aspect ratio, coloured by the prompt.
 */
export class EchoChatModel implements ChatModel {
  readonly provider = 'echo';
  readonly routeKey: string;
  constructor(
    readonly modelId: string,
    readonly limits: RouteLimits = {},
  ) {
    this.routeKey = `echo:${modelId}`;
  }

  async *stream(request: ChatRequest): AsyncIterable<StreamPart> {
    const last = request.messages[request.messages.length - 1];
    const userText = lastUserText(request.messages);
    const tool = last?.role === 'user' && request.toolChoice !== 'none' ? namedTool(request, userText) : undefined;
    if (tool) {
      yield { type: 'tool-call', callId: `call_echo_${request.messages.length}`, name: tool, arguments: JSON.stringify({ input: userText }) };
      yield { type: 'finish', reason: 'tool_calls' };
      return;
    }
    let text: string;
    if (request.purpose === 'summary') text = summarize(summaryLines(request.messages), request.maxTokens);
    else if (last?.role === 'tool') text = `tool results: ${toolResults(request.messages).join('; ')}`;
    else text = userText;
    for (const piece of text.match(/\s*\S+/g) ?? []) {
      if (request.signal?.aborted) return;
      yield { type: 'text-delta', text: piece };
    }
    yield { type: 'finish', reason: 'stop' };
  }

  async generateImage(request: ImageGenerationRequest): Promise<{ images: GeneratedImage[] }> {
    const [w, h] = request.aspectRatio.split(':').map(Number);
    const scale = 64 / Math.max(w, h);
    const png = placeholderPng(JSON.stringify(request.messages), Math.max(1, Math.round(w * scale)), Math.max(1, Math.round(h * scale)));
    return { images: [{ mimeType: 'image/png', data: png.toString('base64') }] };
  }
}

function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'user') return textOf(m);
  }
  return '';
}

/** The forced tool, or the first tool whose name appears in the text as a word (the first tool when one is required). */
function namedTool(request: ChatRequest, text: string): string | undefined {
  const tools = request.tools ?? [];
  if (typeof request.toolChoice === 'object') return tools.find((t) => t.name === (request.toolChoice as { name: string }).name)?.name;
  const named = tools.find((t) => new RegExp(`(^|[^\\w])${t.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w]|$)`).test(text))?.name;
  return named ?? (request.toolChoice === 'required' ? tools[0]?.name : undefined);
}

/** The trailing run of tool messages, in order. */
function toolResults(messages: ChatMessage[]): string[] {
  const out: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--) out.unshift(messages[i].content as string);
  return out;
}

/**
 * What a summary request asks to fold, line by line: the conversation before its last message (the
 * request in the conversation's own form), or, for a transcript sent as one message, that message.
 * Lazily: the summary reads only its first lines, and a branch's window has thousands.
 */
function* summaryLines(messages: ChatMessage[]): Generator<string> {
  const start = messages[0]?.role === 'system' ? 1 : 0;
  if (messages.length - start <= 1) return yield* lastUserText(messages).split('\n');
  for (let i = start; i < messages.length - 1; i++) {
    const m = messages[i];
    yield* `${m.role === 'system' ? 'Earlier summary' : m.role}: ${textOf(m)}`.split('\n');
  }
}

function textOf(m: ChatMessage): string {
  return typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join(' ');
}

function summarize(lines: Iterable<string>, maxTokens = 256): string {
  const wordsPerLine = 8;
  const budgetWords = Math.max(1, Math.floor(maxTokens * 0.6));
  const out: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used >= budgetWords) break;
    const words = line.trim().split(/\s+/).filter(Boolean).slice(0, Math.min(wordsPerLine, budgetWords - used));
    if (words.length === 0) continue;
    out.push(words.join(' '));
    used += words.length;
  }
  return out.join(' / ');
}
