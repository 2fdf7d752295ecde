import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Functions stay short, as named steps (docs/design.md#functions-as-named-steps): none in src/ is over 60 lines, not counting the
// lines of template strings and JSX inside it (a completion script, a screen layout).
const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const MAX_LINES = 60;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

const isFunction = (n: ts.Node): n is ts.FunctionLikeDeclaration =>
  (ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) ||
    ts.isConstructorDeclaration(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n)) && n.body !== undefined;

const isVerbatim = (n: ts.Node) =>
  ts.isTemplateExpression(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isJsxElement(n) || ts.isJsxFragment(n) || ts.isJsxSelfClosingElement(n);

/** Lines of `fn`, less those inside its outermost template strings and JSX. */
function codeLines(sf: ts.SourceFile, fn: ts.Node): number {
  const line = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  let verbatim = 0;
  const visit = (n: ts.Node) => {
    if (isVerbatim(n)) verbatim += line(n.end) - line(n.getStart(sf));
    else ts.forEachChild(n, visit);
  };
  ts.forEachChild(fn, visit);
  return line(fn.end) - line(fn.getStart(sf)) + 1 - verbatim;
}

function longFunctions(): string[] {
  const found: string[] = [];
  for (const file of files(SRC)) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const visit = (n: ts.Node) => {
      if (isFunction(n)) {
        const lines = codeLines(sf, n);
        const name = n.name?.getText(sf) ?? (n.parent && 'name' in n.parent ? (n.parent.name as ts.Node | undefined)?.getText(sf) : undefined) ?? '(anonymous)';
        if (lines > MAX_LINES) found.push(`${relative(SRC, file)}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1} ${name}: ${lines} lines`);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return found;
}

describe('the source', () => {
  it(`has no function over ${MAX_LINES} lines of code`, () => {
    expect(longFunctions()).toEqual([]);
  });
});
