import { afterAll, describe, expect, it } from 'vitest';
import { runUpdate } from '../../src/cli/commands/entities/update.js';
import { testContext as sharedContext } from '../helpers/cli-context.js';
import { collect, makeEngine } from '../helpers/engine.js';
import { tempDir } from '../helpers/temp.js';

const engine = makeEngine(tempDir(), { windowBudget: 400 });
afterAll(() => engine.close());

const testContext = (tty: boolean) => sharedContext(engine, tty);

describe('runUpdate', () => {
  it('on a terminal, says what changed and that the next turn rotates a window over the new budget', async () => {
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', name: 'ada' }, 'local');
    for (let i = 0; i < 3; i++) await collect(engine.entities.send(id, { content: `message ${i} with a few more words in it` }, 'local'));
    const tokens = (await engine.entities.get(id, 'local')).window.tokens!;
    const ctx = testContext(true);
    await runUpdate(ctx, 'ada', { budget: String(tokens - 1) });
    expect(ctx.out()).toBe(`${id}\n`);
    expect(ctx.err()).toBe(
      `updated budget of entity "ada" ${id}\n` +
        `the window holds ${tokens} tokens, over the new budget of ${tokens - 1}: the next turn rotates it\n`,
    );
    const roomy = testContext(true);
    await runUpdate(roomy, id, { name: 'Ada', budget: '8000' });
    expect(roomy.err()).toBe(`updated name, budget of entity "Ada" ${id}\n`);
  });

  it('piped: the id alone, or the entity with --json; nothing on stderr', async () => {
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', name: 'bea' }, 'local');
    const ctx = testContext(false);
    await runUpdate(ctx, id, { instructions: 'Be brief.', json: true });
    expect(JSON.parse(ctx.out())).toEqual(await engine.entities.get(id, 'local'));
    expect((await engine.entities.get(id, 'local')).instructions).toBe('Be brief.');
    expect(ctx.err()).toBe('');
  });

  it('refuses no options before touching the backend', async () => {
    const ctx = testContext(false);
    await expect(runUpdate(ctx, 'nobody', {})).rejects.toMatchObject({ code: 'bad_request', message: 'nothing to update' });
  });
});
