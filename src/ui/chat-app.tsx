import { Box, type Key, Static, Text, useApp, useInput, useStdin, useStdout } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { sanitizeForTerminal as safe } from '../core/text/terminal-text.js';
import type { ChatController, ChatItem, ChatStatus } from './chat-controller.js';
import { editingKey } from './editing-keys.js';
import { type EditorState, clear, deleteForward, emptyEditor, enter, insert, setText } from './line-editor.js';
import { statusLine } from './status-line.js';
import { StreamTail } from './stream-tail.js';
import { useChat } from './use-chat.js';
import { usePrinted } from './use-printed.js';

export interface ChatAppProps {
  controller: ChatController;
  history?: string[];
  /** Called with the input history when the app leaves, so it can be kept for next time. */
  onExit?: (history: string[]) => void;
}

/** `mgpt chat`: the conversation so far, the reply streaming in, a status line and the input. */
export function ChatApp({ controller, history = [], onExit }: ChatAppProps) {
  const state = useChat(controller);
  const { printed, live } = usePrinted(state);
  const app = useApp();
  // The editor lives in a ref too: several keys can arrive before React renders again.
  const ref = useRef<EditorState | null>(null);
  ref.current ??= emptyEditor(history);
  const [editor, setEditor] = useState<EditorState>(ref.current);
  const update = (next: EditorState) => {
    ref.current = next;
    setEditor(next);
  };
  // Tab's choices when more than one fits, shown under the input until the next key.
  const [choices, setChoices] = useState<string[]>([]);
  const completeLine = async () => {
    const before = ref.current!.text;
    const r = await controller.complete(before);
    if (ref.current!.text !== before) return; // typed on meanwhile: that wins
    update(setText(ref.current!, r.text));
    setChoices(r.candidates);
  };
  const submit = () => {
    const r = enter(ref.current!);
    update(r.state);
    if (r.submitted !== undefined) void controller.submit(r.submitted);
  };

  // ink reports Backspace (DEL, 0x7f) and the Delete key (ESC [3~) alike; the raw sequence tells them apart.
  const raw = useRef('');
  const { internal_eventEmitter: keys } = useStdin();
  useEffect(() => {
    const remember = (data: string) => (raw.current = data);
    keys?.prependListener('input', remember);
    return () => void keys?.removeListener('input', remember);
  }, [keys]);

  useEffect(() => {
    if (!state.exited) return;
    onExit?.(ref.current!.history);
    app.exit();
  }, [state.exited]);

  useInput((input, key) => {
    setChoices([]);
    const actions = { controller, update, submit, complete: () => void completeLine() };
    for (const k of keysIn(input, key, raw.current)) onKey(ref.current!, k.input, k.key, k.raw, actions);
  });

  return (
    <Box flexDirection="column">
      <Static items={printed}>{(p) => <Item key={p.key} item={p.item} />}</Static>
      {live !== null && <Streaming text={safe(live)} below={rowsBelow(editor.text, choices)} />}
      <StatusBar status={state.status} busy={state.busy} />
      {!state.exited && <Input editor={editor} waiting={state.pendingTools[0]?.name} />}
      {!state.exited && choices.length > 0 && <Text dimColor>{choices.join('  ')}</Text>}
    </Box>
  );
}

/** What a key can do to the chat: edit the line, send it, complete it, or reach the controller. */
interface KeyActions {
  controller: ChatController;
  update(next: EditorState): void;
  submit(): void;
  complete(): void;
}

/**
 * The keys in one read of the terminal. ink splits a read only at escape sequences, so Ctrl-C and
 * Ctrl-D typed ahead (or read together on a busy machine) arrive glued to each other or to text;
 * they are taken apart here, each as its own key, the text around them as it came.
 */
function keysIn(input: string, key: Key, raw: string): Array<{ input: string; key: Key; raw: string }> {
  if (raw.length < 2 || !/[\x03\x04]/.test(raw) || raw.includes('\x1b')) return [{ input, key, raw }];
  return raw
    .split(/([\x03\x04])/)
    .filter(Boolean)
    .map((piece) => (piece === '\x03' || piece === '\x04'
      ? { input: piece === '\x03' ? 'c' : 'd', key: { ...key, ctrl: true }, raw: piece }
      : { input: piece, key: { ...key, ctrl: false }, raw: piece }));
}

/** One key (or a chunk of typed-ahead input) on the editor `s`; `raw` is the sequence the terminal sent. */
function onKey(s: EditorState, input: string, key: Key, raw: string, a: KeyActions): void {
  if (key.tab && !key.shift) return a.complete();
  if (key.ctrl && input === 'c') {
    if (!a.controller.cancel()) a.update(clear(s));
    return;
  }
  if (key.ctrl && input === 'd') {
    // On a line with text, Ctrl-D deletes forward as in readline; on an empty one it leaves.
    if (!s.text) a.controller.exit();
    else a.update(deleteForward(s));
    return;
  }
  if (key.return) return key.meta ? a.update(insert(s, '\n')) : a.submit();
  // Typed ahead faster than the terminal is read: "text\r" arrives as one chunk. A chunk with
  // line breaks inside is a paste and keeps them.
  if (input.length > 1 && input.endsWith('\r') && !input.slice(0, -1).includes('\r')) {
    a.update(insert(s, input.slice(0, -1)));
    return a.submit();
  }
  const edited = editingKey(s, input, key, raw);
  if (edited) return a.update(edited);
  if (key.escape || key.tab || key.ctrl || key.meta || key.pageUp || key.pageDown || key.home || key.end) return;
  // Control bytes that arrive glued to other input are not text: they never enter the line.
  const text = input.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '');
  if (text) a.update(insert(s, text));
}

function Item({ item }: { item: ChatItem }) {
  switch (item.kind) {
    case 'user':
      return (
        <Text>
          <Text color="cyan" bold>
            {'› '}
          </Text>
          {safe(item.text)}
        </Text>
      );
    case 'assistant':
      return item.cancelled ? (
        <Text color="green" dimColor>
          {safe(item.text)}
          <Text color="yellow">{' [cancelled]'}</Text>
        </Text>
      ) : (
        // A reply's line break printed as its own line is an empty line, not no line.
        <Text color="green">{safe(item.text) || ' '}</Text>
      );
    case 'notice':
      return <Text color="yellow">{`· ${item.text}`}</Text>;
    case 'error':
      return (
        <Text color="red">
          {`error: ${item.text}`}
          {item.hint ? <Text dimColor>{`  (${item.hint})`}</Text> : null}
        </Text>
      );
    case 'output':
      return <Text>{safe(item.text)}</Text>;
  }
}

/** The reply streaming in, as much of its end as leaves the live screen shorter than the terminal (see StreamTail). */
function Streaming({ text, below }: { text: string; below: (columns: number) => number }) {
  const columns = useColumns();
  const rows = useRows();
  const tail = useRef<StreamTail | null>(null);
  if (tail.current?.columns !== columns) tail.current = new StreamTail(columns);
  const shown = Number.isFinite(rows) ? tail.current.tail(text, Math.max(1, rows - below(columns))) : text;
  return (
    <Box>
      <Text color="green">{shown || '…'}</Text>
    </Box>
  );
}

/** Rows the live screen keeps under a streaming reply: the status line, the input, Tab's choices, and one spare. */
function rowsBelow(input: string, choices: string[]) {
  return (columns: number) => {
    const inputRows = input.split('\n').reduce((n, line) => n + Math.ceil((line.length + 3) / columns), 0);
    return 2 + inputRows + (choices.length ? Math.ceil(choices.join('  ').length / columns) : 0);
  };
}

function StatusBar({ status, busy }: { status: ChatStatus; busy: boolean }) {
  const line = statusLine(status, busy, useColumns());
  return (
    <Box>
      <Text dimColor wrap="truncate-end">
        {line.text}
      </Text>
      {line.busy ? <Text color="yellow">{line.busy}</Text> : null}
    </Box>
  );
}

/** The terminal's width, following resizes. */
function useColumns(): number {
  const { stdout } = useStdout();
  const [columns, setColumns] = useState(stdout.columns || 80);
  useEffect(() => {
    const resized = () => setColumns(stdout.columns || 80);
    stdout.on('resize', resized);
    resized();
    return () => void stdout.off('resize', resized);
  }, [stdout]);
  return columns;
}

/** The terminal's height, following resizes; Infinity when it is not a terminal. */
function useRows(): number {
  const { stdout } = useStdout();
  const [rows, setRows] = useState(stdout.rows || Infinity);
  useEffect(() => {
    const resized = () => setRows(stdout.rows || Infinity);
    stdout.on('resize', resized);
    resized();
    return () => void stdout.off('resize', resized);
  }, [stdout]);
  return rows;
}

function Input({ editor, waiting }: { editor: EditorState; waiting?: string }) {
  const before = editor.text.slice(0, editor.cursor);
  const at = editor.text[editor.cursor] ?? ' ';
  const after = editor.text.slice(editor.cursor + 1);
  return (
    <Box>
      <Text color="cyan" bold>
        {waiting ? `${waiting} result › ` : '› '}
      </Text>
      <Text>
        {before}
        <Text inverse>{at === '\n' ? ' ' : at}</Text>
        {at === '\n' ? '\n' : ''}
        {after}
      </Text>
    </Box>
  );
}
