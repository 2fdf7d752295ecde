// A stand-in for node-llama-cpp's types, used only by `npm run typecheck` on a machine where the
// library is not installed (it is the user's optional install, not a dependency of mgpt). Every
// name mgpt uses is `any` here, so such a check proves everything but the llama provider's calls
// into the library; where node-llama-cpp is installed (CI installs it) its own types are used.
// A name the code starts using must be added here: test/install/typecheck.test.ts fails until it is.
declare module 'node-llama-cpp' {
  export type ChatHistoryItem = any;
  export type ChatModelFunctionCall = any;
  export type ChatModelFunctions = any;
  export type ChatModelResponse = any;
  export type ChatWrapper = any;
  export type Llama = any;
  export type LlamaChatResponse<Functions = any> = any;
  export type LlamaGrammar = any;
  export type LlamaModel = any;
  export type Tokenizer = any;
  export type LlamaChat = any;
  export const LlamaChat: any;
  export const LlamaLogLevel: any;
  export const LlamaText: any;
  export const TemplateChatWrapper: any;
  export const getLlama: any;
  export const resolveChatWrapper: any;
}
