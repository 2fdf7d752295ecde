/** The roles as the published chat templates check them: one optional system message, then user and assistant alternating from a user (a tool round's messages aside). */
export function alternates(messages: ReadonlyArray<{ role: string; tool_calls?: unknown[] }>): boolean {
  const rest = messages[0]?.role === 'system' ? messages.slice(1) : messages;
  const turns = rest.filter((m) => m.role !== 'tool' && !(m.role === 'assistant' && m.tool_calls?.length));
  return turns.every((m, i) => m.role === (i % 2 === 0 ? 'user' : 'assistant'));
}
