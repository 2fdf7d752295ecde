import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue 34, item 6: a newcomer follows the README into docs/, and a maintainer follows a comment's
// reference into docs/design.md. Every relative link and anchor must land somewhere.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The text outside fenced code blocks, one line at a time, with inline code spans emptied. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    return !fenced && !/^\s*```/.test(line);
  }).map((line) => line.replace(/`[^`]*`/g, (code) => (code.length > 2 ? `\`${code.slice(1, -1).replace(/[[\]()]/g, ' ')}\`` : code)));
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const plain = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*_]{1,2}([^`*_]+)[`*_]{1,2}/g, '$1');
    const base = plain.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative link targets of a markdown page: `[text](target)`, outside code. */
function links(text: string): string[] {
  const out: string[] = [];
  for (const line of prose(text)) {
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1])) out.push(m[1]);
    }
  }
  return out;
}

/** Why `target`, written in `from` (a repository path), does not resolve; null when it does. */
export function broken(from: string, target: string): string | null {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(ROOT, from) : resolve(dirname(join(ROOT, from)), path);
  if (!existsSync(file)) return `${relative(ROOT, file)} does not exist`;
  if (anchor === undefined) return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `#${anchor} points into a file that is not markdown`;
  return anchors(readFileSync(file, 'utf8')).has(anchor) ? null : `${relative(ROOT, file)} has no heading #${anchor}`;
}

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'fixtures' ? [] : walk(`${dir}/${e.name}`)) : /\.(ts|tsx|mjs|js)$/.test(e.name) ? [`${dir}/${e.name}`] : [],
  );
}

/** The comments of a source file: line comments and block comments, with their line numbers. */
function comments(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  for (const m of text.matchAll(/\/\*[\s\S]*?\*\/|(?<![:'"`\w\\])\/\/[^\n]*/g)) {
    out.push({ line: text.slice(0, m.index).split('\n').length, text: m[0] });
  }
  return out;
}

// Sources kept outside the repository: the product notes, the style notes and the wire
// contracts' section numbers. Comments cite docs/design.md (or another docs page) instead.
const OUTSIDE = [/\bSPEC\b/, /\bSTYLE\.md\b/, /§/, /\bseeds?\b[^.\n]{0,40}\bsections?\b/i, /\bseed's\b[^.\n]{0,60}\(\d+(\.\d+)+\)/i];

/** Lines of comments in `file` that cite a document outside the repository. */
function outside(file: string): string[] {
  const bad: string[] = [];
  for (const c of comments(read(file))) {
    c.text.split('\n').forEach((l, i) => {
      if (OUTSIDE.some((re) => re.test(l))) bad.push(`${file}:${c.line + i}: ${l.trim()}`);
    });
  }
  return bad;
}

describe('links in README.md and docs/', () => {
  it.each(pages)('every relative link and anchor in %s resolves', (page) => {
    const bad = links(read(page)).map((t) => [t, broken(page, t)]).filter(([, why]) => why !== null);
    expect(bad, bad.map(([t, why]) => `${page}: (${t}) ${why}`).join('\n')).toEqual([]);
  });

  it('computes anchors as GitHub does', () => {
    const a = anchors('# Memory past the window: recall\n## `mgpt chat`\n## A real model offline: the `llama` provider\n## Notes\n## Notes\n```sh\n# not a heading\n```\n');
    expect([...a]).toEqual(['memory-past-the-window-recall', 'mgpt-chat', 'a-real-model-offline-the-llama-provider', 'notes', 'notes-1']);
    expect(broken('README.md', 'docs/guide.md#no-such-heading')).toBe('docs/guide.md has no heading #no-such-heading');
    expect(broken('docs/guide.md', '../README.md#quick-start')).toBeNull();
  });

  it('the README stays within 250 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });
});

describe('references in comments', () => {
  const files = [...walk('src'), ...walk('test'), ...walk('bench'), ...walk('scripts')];

  it('every docs/ page or anchor a comment cites exists', () => {
    const bad: string[] = [];
    for (const file of files) {
      for (const c of comments(read(file))) {
        for (const m of c.text.matchAll(/\b((?:docs\/[\w.-]+\.md|README\.md)(?:#[\w-]+)?)/g)) {
          const why = broken('README.md', m[1]); // a repository path, as from the root
          if (why) bad.push(`${file}:${c.line}: ${m[1]}: ${why}`);
        }
      }
    }
    expect(bad, bad.join('\n')).toEqual([]);
  });

  it('no comment cites a document outside the repository (SPEC, STYLE.md, a seed section)', () => {
    const bad = files.filter((f) => f !== 'test/e2e/docs-links.test.ts').flatMap(outside);
    expect(bad, `cite docs/design.md#… instead:\n${bad.join('\n')}`).toEqual([]);
  });
});
