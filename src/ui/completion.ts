import { shortId } from '../core/ref.js';

/** Tab completion of the REPL's input line: slash commands, and after `/switch ` an entity or universe. */

export const COMMANDS = ['/help', '/window', '/history', '/rotations', '/search', '/export', '/new', '/switch', '/memory', '/instructions', '/model', '/rotate', '/undo', '/retry', '/exit'];

/** Something `/switch` can go to: a name (may be empty) and an id, offered as its short (8-character) form. */
export interface SwitchTarget {
  id: string;
  name: string;
}

export interface Completion {
  /** The line after Tab (unchanged when nothing fits or nothing more is common). */
  text: string;
  /** The choices when more than one fits; empty when the line was completed or nothing fits. */
  candidates: string[];
}

/** True when completing the line needs the list of entities (or universes). */
export function wantsTargets(line: string): boolean {
  return /^\/switch\s/.test(line);
}

/**
 * Completes `line`: a lone `/word` among the commands; `/switch REF` among the targets' names and
 * short ids. One match completes (a command gets a trailing space); several extend the line to
 * what they share and are returned as candidates.
 */
export function complete(line: string, targets: SwitchTarget[] = []): Completion {
  const cmd = /^\/\S*$/.exec(line);
  if (cmd) return pick(line, '', COMMANDS, ' ');
  const sw = /^(\/switch\s+)(.*)$/s.exec(line);
  if (!sw) return { text: line, candidates: [] };
  const words = new Set<string>();
  for (const t of targets) {
    if (t.name) words.add(t.name);
    words.add(shortId(t.id));
  }
  return pick(sw[2], sw[1], [...words], '');
}

function pick(typed: string, head: string, words: string[], after: string): Completion {
  const fits = words.filter((w) => w.startsWith(typed)).sort();
  if (fits.length === 0) return { text: head + typed, candidates: [] };
  if (fits.length === 1) return { text: head + fits[0] + after, candidates: [] };
  return { text: head + commonPrefix(fits), candidates: fits };
}

function commonPrefix(words: string[]): string {
  let p = words[0];
  for (const w of words) while (!w.startsWith(p)) p = p.slice(0, -1);
  return p;
}
