import { randomBytes } from 'node:crypto';
import { ProviderError } from '../../core/errors.js';
import type { StreamPart, ToolChoice, ToolDefinition } from '../spec.js';
import { assertEnforceable, toGbnfSchema } from './llama-grammar.js';

type Lib = typeof import('node-llama-cpp');
type ChatWrapper = import('node-llama-cpp').ChatWrapper;
type ChatModelFunctions = import('node-llama-cpp').ChatModelFunctions;

/** The functions offered to the model, and whether it must call one of them. */
export interface ToolPlan {
  functions: ChatModelFunctions;
  /** `required` or a named tool: the reply is a call, never text. */
  force: boolean;
}

/**
 * What `tools` and `toolChoice` ask, as node-llama-cpp functions. `none` (or no tools) offers none;
 * a named tool is the only one offered, so forcing a call forces that one.
 */
export function toolPlan(tools: ToolDefinition[] | undefined, choice: ToolChoice | undefined): ToolPlan | undefined {
  if (!tools?.length || choice === 'none') return undefined;
  const offered = typeof choice === 'object' ? tools.filter((t) => t.name === choice.name) : tools;
  if (offered.length === 0) {
    throw new ProviderError(`toolChoice names ${JSON.stringify((choice as { name: string }).name)}, which is not among the tools`, {
      status: 400,
    });
  }
  const functions: Record<string, ChatModelFunctions[string]> = {};
  for (const t of offered) {
    if (t.parameters) assertEnforceable(t.parameters, `the parameters of tool ${t.name}`);
    functions[t.name] = { description: t.description, params: t.parameters ? (toGbnfSchema(t.parameters) as never) : undefined };
  }
  return { functions, force: choice === 'required' || typeof choice === 'object' };
}

/** Refuses tools on a chat template that has no function-call syntax, instead of ignoring them. */
export function assertCanCallFunctions(wrapper: ChatWrapper): void {
  if (wrapper.settings.functions == null) {
    throw new ProviderError(`this model's chat template (${wrapper.wrapperName}) has no syntax for function calls`, {
      status: 400,
      hint: 'send the request without tools (or with toolChoice "none"), or use a model whose template supports tools',
    });
  }
}

/**
 * The same chat template, but every reply starts inside a function call: node-llama-cpp injects the
 * template's call prefix and its grammar then allows only an offered function name and parameters
 * that match that function's schema. This is how `required` and a named toolChoice are kept.
 */
export function forcingCalls(lib: Lib, wrapper: ChatWrapper): ChatWrapper {
  const forced = Object.create(wrapper) as ChatWrapper;
  forced.generateContextState = function (this: ChatWrapper, options: Parameters<ChatWrapper['generateContextState']>[0]) {
    const state = wrapper.generateContextState.call(this, options);
    if (state.functionCall) return { ...state, functionCall: { initiallyEngaged: true, disengageInitiallyEngaged: [] } };
    const prefix = wrapper.settings.functions.call.prefix;
    return {
      contextText: state.contextText,
      stopGenerationTriggers: state.stopGenerationTriggers,
      noPrefixTrigger: { type: 'functionCall', inject: lib.LlamaText(prefix) },
    };
  };
  return forced;
}

/** A call the model made, as the stream part the engine reads (arguments are JSON text). */
export function toolCallPart(call: { functionName: string; params: unknown }): Extract<StreamPart, { type: 'tool-call' }> {
  return {
    type: 'tool-call',
    callId: `call_${randomBytes(9).toString('base64url')}`,
    name: call.functionName,
    arguments: JSON.stringify(call.params ?? {}),
  };
}
