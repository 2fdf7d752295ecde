import { describe, expect, it } from 'vitest';
import { loadLexicon, formsOf, queryTerms } from '../../src/core/text/word-forms.js';
import { questionWords } from '../../src/core/text/recall-query.js';

const lex = (await loadLexicon())!;

describe('word forms (recall)', () => {
  it('loads the lexicon', () => {
    expect(lex).toBeDefined();
  });

  it('joins irregular forms through their lemma, both ways', () => {
    expect(formsOf(lex, 'drawing')).toEqual(expect.arrayContaining(['drawing', 'draw', 'drew', 'drawn']));
    expect(formsOf(lex, 'drew')).toEqual(expect.arrayContaining(['draw', 'drawn']));
    expect(formsOf(lex, 'buy')).toEqual(expect.arrayContaining(['bought']));
    expect(formsOf(lex, 'taught')).toEqual(expect.arrayContaining(['teach']));
    expect(formsOf(lex, 'child')).toEqual(expect.arrayContaining(['children']));
  });

  it('takes a derivation back to its base word', () => {
    expect(formsOf(lex, 'mentorship')).toContain('mentor');
    expect(formsOf(lex, 'photography')).toContain('photograph');
    expect(formsOf(lex, 'teacher')).toEqual(expect.arrayContaining(['teach', 'taught']));
    // Only onto a base of the right kind: a brother is no broth, a party no part.
    expect(formsOf(lex, 'brother')).not.toContain('broth');
    expect(formsOf(lex, 'party')).not.toContain('part');
  });

  it('splits a compound into a phrase, and joins two adjacent words of a question into one', () => {
    expect(formsOf(lex, 'roadtrip')).toContain('road trip');
    expect(formsOf(lex, 'skateboarding')).toContain('skate boarding');
    const terms = queryTerms(lex, questionWords("What did Theo make Maya's book shelf from?"));
    expect(terms.map((t) => t.word)).toContain('bookshelf');
    expect(queryTerms(lex, questionWords('Who does the baby-sitting?')).map((t) => t.word)).toContain('babysitting');
  });

  it('keeps a name or an unknown word as it is, and every form is letters, digits and at most one space', () => {
    expect(formsOf(lex, 'jonah')).toEqual(['jonah']);
    expect(formsOf(lex, 'constructor')).toEqual(['constructor']);
    for (const w of ['going', 'wives', 'lookers', 'o', 'mice', 'best']) for (const f of formsOf(lex, w)) expect(f).toMatch(/^[\p{L}\p{N}]+( [\p{L}\p{N}]+)?$/u);
  });

  it('without a lexicon each word is its own only form', () => {
    expect(queryTerms(undefined, ['drew', 'portrait']).map((t) => t.forms)).toEqual([['drew'], ['portrait'], ['drewportrait']]);
  });
});
