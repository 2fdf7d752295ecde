import { describe, expect, it } from 'vitest';
import { checkMessages, dropSystemMessages, parseFacadeModel, reconcile } from '../../src/engine/openai/chat-facade.js';

const t = (...contents: string[]) => contents.map((content, i) => ({ seq: i + 1, role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content }));
const m = (...contents: string[]) => contents.map((content, i) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content }));

describe('chat facade rules', () => {
  it('names targets: entity, universe, platform ids and aliases; anything else is a 404', () => {
    expect(parseFacadeModel('entity:web')).toEqual({ kind: 'entity', ref: 'web' });
    expect(parseFacadeModel('universe:abcd')).toEqual({ kind: 'universe', ref: 'abcd' });
    expect(parseFacadeModel('game-1-lite-frozen')).toEqual({ kind: 'platform', id: 'game-1-lite-frozen' });
    expect(() => parseFacadeModel('image-1')).toThrow(/does not exist/);
    expect(() => parseFacadeModel('entity:')).toThrow(/does not exist/);
    expect(() => parseFacadeModel(3)).toThrow(/model is required/);
  });

  it('reads text parts and developer messages; refuses other roles and non-text parts', () => {
    expect(checkMessages([{ role: 'developer', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }])).toEqual([{ role: 'system', content: 'ab' }]);
    expect(() => checkMessages([{ role: 'tool', content: 'x' }])).toThrow(/not supported/);
    expect(() => checkMessages([{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }])).toThrow(/only text/);
    expect(() => checkMessages([])).toThrow(/non-empty/);
  });

  it('drops system messages equal to the instructions (or empty), refuses others', () => {
    expect(dropSystemMessages([{ role: 'system', content: ' Be kind. ' }, { role: 'user', content: 'x' }], 'Be kind.', 'e')).toEqual([{ role: 'user', content: 'x' }]);
    expect(() => dropSystemMessages([{ role: 'system', content: 'Other' }, { role: 'user', content: 'x' }], 'Be kind.', 'e')).toThrow(/instructions/);
  });

  it('reconciles: the history must be the transcript, the last user message is new', () => {
    expect(reconcile(m('a', 'ra', 'b'), t('a', 'ra'), 2)).toEqual({ kind: 'new', content: 'b' });
    expect(reconcile(m('fresh'), t('a', 'ra'), 2)).toEqual({ kind: 'new', content: 'fresh' });
    expect(reconcile(m('a', 'edited', 'b'), t('a', 'ra'), 2)).toMatchObject({ kind: 'conflict', index: 1, seq: 2 });
    expect(reconcile(m('a', 'ra', 'b'), t('a', 'ra', 'b', 'rb'), 4)).toMatchObject({ kind: 'conflict', index: 2, seq: 3, message: expect.stringContaining('already answered') });
    expect(reconcile(m('a', 'ra', 'b', 'rb', 'c'), t('a', 'ra'), 2)).toMatchObject({ kind: 'conflict', index: 2, seq: 3 });
    expect(() => reconcile([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }], [], 0)).toThrow(/alternate/);
    expect(() => reconcile(m('a', 'ra'), [], 0)).toThrow(/last message must be a user/);
  });
});
