import { useSyncExternalStore } from 'react';
import type { ChatController, ChatState } from './chat-controller.js';

/** The controller's state as React state: every turn event re-renders what changed. */
export function useChat(controller: ChatController): ChatState {
  return useSyncExternalStore(controller.subscribe, controller.getState, controller.getState);
}
