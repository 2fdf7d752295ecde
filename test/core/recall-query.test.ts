import { describe, expect, it } from 'vitest';
import { contentWords, refersBack } from '../../src/core/text/recall-query.js';

describe('recall query', () => {
  it('a question points back by a pronoun or "that"/"there", not by its own subject', () => {
    expect(refersBack('Where does she live now?')).toBe(true);
    expect(refersBack('How much was it?')).toBe(true);
    expect(refersBack('When did I stop smoking?')).toBe(false);
    expect(refersBack('What does Anselm do?')).toBe(false);
  });

  it('keeps the content words, longest first, without stop words or repeats', () => {
    expect(contentWords('When did I stop smoking, and stop?')).toEqual(['smoking', 'stop']);
  });
});
