// ESC sequences whole (CSI, OSC/DCS/APC/PM/SOS strings up to their terminator, two-byte escapes),
// then any C0 control but \n and \t, DEL, and C1 controls (0x9b is a one-byte CSI on some terminals).
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~]?)/g;
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text from data (names, instructions, messages) made safe to print for a person: escape
 * sequences and control characters are removed, so a hostile value cannot recolour, retitle or
 * rewrite the terminal. Newlines and tabs stay. Every human (table, TSV, text) output of stored
 * values goes through this; --json keeps the exact value (JSON escapes it).
 */
export function sanitizeForTerminal(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
}

// C0 controls, DEL, C1 controls, the line and paragraph separators (some viewers break lines at
// them) and bidi controls (they reorder what the reader sees); the backslash, so an escape is never ambiguous.
const UNSAFE_IN_LOG = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\\]/g;
const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

/**
 * A value from a request (a path, an id) as one field of a text log line, the way JSON would
 * escape it: control characters written visibly (`\n`, `\x1b`, `\u2028`), and the field quoted
 * when it is empty or holds a space, a quote or `=`, so it can neither end the line, reach the
 * terminal, nor pass for another field.
 */
export function logField(value: string): string {
  const escaped = value.replace(UNSAFE_IN_LOG, escapeChar);
  return escaped === '' || /[\s"=]/.test(escaped) ? `"${escaped.replace(/"/g, '\\"')}"` : escaped;
}

function escapeChar(ch: string): string {
  const code = ch.charCodeAt(0);
  return NAMED_ESCAPES[ch] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}
