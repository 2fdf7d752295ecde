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
