/**
 * The console's one way to make elements. Text is always a text node: whatever a model, a user or
 * a log record says reaches the page as text, never as markup. Attributes are set one by one, and
 * `href` here only ever holds the console's own `#/...` routes (markdown.ts alone makes http(s) and
 * mailto links, from a reply's Markdown).
 */

import { formatUsd } from '../core/text/numbers.js';

export type Child = Node | string | number | null | undefined | false | Child[];
export type Attrs = Record<string, string | number | boolean | null | undefined | ((ev: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (name === 'href' && !String(value).startsWith('#/')) throw new Error(`the console links only to its own pages, not ${String(value)}`);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces what `el` holds. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

const SVG = 'http://www.w3.org/2000/svg';

/** An SVG element (charts), attributes set the same way. */
export function svg(tag: string, attrs: Record<string, string | number>, ...children: Array<SVGElement | string>): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}

/** A snippet with its matched words marked, as text. */
export function highlighted(snippet: string, highlights: Array<[number, number]>): Child[] {
  const out: Child[] = [];
  let at = 0;
  for (const [start, end] of [...highlights].sort((a, b) => a[0] - b[0])) {
    if (start < at) continue;
    out.push(snippet.slice(at, start), h('mark', {}, snippet.slice(start, end)));
    at = end;
  }
  out.push(snippet.slice(at));
  return out;
}

export const fmt = (n: number) => n.toLocaleString('en-US');
/** Dollars as every command prints them (one format: docs/operating.md#how-money-is-printed). */
export const usd = formatUsd;

/** A status line that assistive technology reads out. */
export function notice(text: string, kind: 'info' | 'error' = 'info'): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A wide table in a region that scrolls sideways on a narrow screen (focusable, so a keyboard can scroll it). */
export function scroller(label: string, table: HTMLElement): HTMLElement {
  return h('div', { class: 'scroll', role: 'region', 'aria-label': label, tabindex: '0' }, table);
}

/** A labelled form field. */
export function field(label: string, input: HTMLElement): HTMLElement {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input);
}
