import { Lexer, type Token, type Tokens } from 'marked';
import { type Child, h } from './dom.js';

/**
 * Markdown as DOM nodes, built from marked's syntax tree: every piece of text becomes a text node
 * and every element is made here, so no string from a model or a user is ever parsed as markup.
 * Raw HTML in the text is shown as the characters it is; a link keeps its target only when that is
 * http(s) or mailto (a `javascript:` or `data:` link is its words alone); images are never loaded
 * (the page asks nothing of another origin): their description and address are shown as text.
 */
export function markdown(source: string): DocumentFragment {
  const out = document.createDocumentFragment();
  for (const node of blocks(Lexer.lex(source, { gfm: true, breaks: true }))) out.append(node);
  return out;
}

const SAFE_LINK = /^(https?:|mailto:)/i;

function blocks(tokens: Token[]): Node[] {
  return tokens.flatMap((t) => {
    const node = block(t);
    return node ? [node] : [];
  });
}

function block(t: Token): Node | null {
  switch (t.type) {
    case 'space':
    case 'def':
      return null;
    case 'heading':
      // A reply's headings sit under the page's own h1-h3: they start at h4.
      return h(`h${Math.min(6, 3 + (t as Tokens.Heading).depth)}` as 'h4', {}, inline(t.tokens));
    case 'paragraph':
      return h('p', {}, inline(t.tokens));
    case 'code':
      return h('pre', { class: 'code' }, h('code', {}, (t as Tokens.Code).text));
    case 'blockquote':
      return h('blockquote', {}, blocks(t.tokens ?? []));
    case 'hr':
      return h('hr');
    case 'list':
      return list(t as Tokens.List);
    case 'table':
      return table(t as Tokens.Table);
    case 'text':
      return h('p', {}, t.tokens ? inline(t.tokens) : (t as Tokens.Text).text);
    default:
      // html and anything unknown: the source as written, as text.
      return h('p', {}, t.raw);
  }
}

function list(t: Tokens.List): HTMLElement {
  const items = t.items.map((item) => h('li', {}, item.task ? (item.checked ? '☑ ' : '☐ ') : null, item.loose ? blocks(item.tokens) : looseless(item.tokens)));
  return t.ordered ? h('ol', { start: t.start === '' ? null : t.start }, items) : h('ul', {}, items);
}

/** A tight list item's text tokens are its words, not paragraphs. */
function looseless(tokens: Token[]): Child[] {
  return tokens.map((t) => (t.type === 'text' ? inline(t.tokens ?? [t]) : t.type === 'checkbox' ? null : block(t)));
}

function table(t: Tokens.Table): HTMLElement {
  const cell = (tag: 'th' | 'td', c: Tokens.TableCell) => h(tag, tag === 'th' ? { scope: 'col' } : {}, inline(c.tokens));
  return h(
    'div',
    { class: 'scroll md-table', role: 'region', 'aria-label': 'Table', tabindex: '0' },
    h('table', {}, h('thead', {}, h('tr', {}, t.header.map((c) => cell('th', c)))), h('tbody', {}, t.rows.map((r) => h('tr', {}, r.map((c) => cell('td', c)))))),
  );
}

function inline(tokens: Token[] | undefined): Child[] {
  return (tokens ?? []).map((t) => {
    switch (t.type) {
      case 'strong':
        return h('strong', {}, inline(t.tokens));
      case 'em':
        return h('em', {}, inline(t.tokens));
      case 'del':
        return h('del', {}, inline(t.tokens));
      case 'codespan':
        return h('code', {}, (t as Tokens.Codespan).text);
      case 'br':
        return h('br');
      case 'link':
        return link(t as Tokens.Link);
      case 'image':
        return `[image: ${(t as Tokens.Image).text} ${(t as Tokens.Image).href}]`;
      case 'text':
        return t.tokens ? inline(t.tokens) : (t as Tokens.Text).text;
      case 'escape':
        return (t as Tokens.Escape).text;
      default:
        // html tags and anything unknown: as written.
        return t.raw;
    }
  });
}

/** An anchor made here, not by h(), which keeps hrefs to the console's own routes: these leave it, in a new tab. */
function link(t: Tokens.Link): Child {
  const words = inline(t.tokens);
  if (!SAFE_LINK.test(t.href.trim())) return words;
  const a = h('a', { rel: 'noopener noreferrer nofollow', target: '_blank', class: 'external' }, words);
  a.setAttribute('href', t.href.trim());
  return a;
}
