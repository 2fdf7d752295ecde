import { describe, expect, it } from 'vitest';
import { parseValue } from '../../src/config/schema.js';
import { providerModelProblem } from '../../src/core/models.js';
import { resolveSettings } from '../../src/config/config.js';
import { effectiveSettings } from '../../src/config/effective.js';
import { DEFAULT_LEASE_TTL_MS } from '../../src/core/wire/entity-types.js';
import { engineLimits } from '../../src/engine/engine.js';

const env = { MGPT_CONFIG_DIR: '/nonexistent-mgpt-config', XDG_DATA_HOME: '/data' };

describe('settings: one table for what a command uses and what config list shows', () => {
  it('shows MGPT_LEASE_TTL_MS, which every command honours, with its source; the default otherwise', () => {
    const set = { ...env, MGPT_LEASE_TTL_MS: '2500' };
    expect(resolveSettings(set, {}, {}).leaseTtlMs).toBe(2500);
    expect(effectiveSettings(set, {}, {})).toContainEqual({ key: 'engine.leaseTtlMs', value: '2500', source: 'env MGPT_LEASE_TTL_MS' });
    expect(resolveSettings(env, {}, {}).leaseTtlMs).toBe(DEFAULT_LEASE_TTL_MS);
    expect(effectiveSettings(env, {}, {})).toContainEqual({ key: 'engine.leaseTtlMs', value: DEFAULT_LEASE_TTL_MS, source: 'default' });
  });

  it('agrees with resolveSettings on every value, for each source', () => {
    const file = { profile: 'work', profiles: { work: { db: '/p.db', poolSize: 3, engine: { windowBudget: 4000, leaseTtlMs: 9000 }, dev: true } } };
    const e = { ...env, MGPT_TRANSCRIPT_CAP: '500000', MGPT_BACKEND: 'local' };
    const flags = { db: '/flag.db' };
    const s = resolveSettings(e, flags, file);
    const shown = Object.fromEntries(effectiveSettings(e, flags, file).map((r) => [r.key, [r.value, r.source]]));
    expect(shown).toMatchObject({
      db: ['/flag.db', 'flag --db'],
      backend: ['local', 'env MGPT_BACKEND'],
      poolSize: [3, 'profile work'],
      dev: [true, 'profile work'],
      'engine.windowBudget': [4000, 'profile work'],
      'engine.transcriptCap': ['500000', 'env MGPT_TRANSCRIPT_CAP'],
      'engine.leaseTtlMs': [9000, 'profile work'],
      promptsDir: ['/data/mgpt/prompts', 'default'],
    });
    expect([s.db, s.backend, s.poolSize, s.dev, s.windowBudget, s.transcriptCap, s.leaseTtlMs, s.promptsDir]).toEqual([
      '/flag.db', 'local', 3, true, 4000, 500_000, 9000, '/data/mgpt/prompts',
    ]);
  });

  it('refuses a bad number in the environment where a command would use it', () => {
    expect(() => resolveSettings({ ...env, MGPT_LEASE_TTL_MS: 'soon' }, {}, {})).toThrow(expect.objectContaining({ code: 'config', message: 'MGPT_LEASE_TTL_MS must be a positive integer, got "soon"' }));
  });

  it('takes the rotation target and summary share from the environment or a profile, and refuses shares that leave no headroom', () => {
    const s = resolveSettings({ ...env, MGPT_ROTATE_TARGET_PERCENT: '60' }, {}, { profile: 'w', profiles: { w: { engine: { summaryPercent: 10 } } } });
    expect([s.rotateTargetPercent, s.summaryPercent]).toEqual([60, 10]);
    expect(engineLimits(s).rotation).toEqual({ target: 0.6, summary: 0.1 });
    expect(engineLimits({}).rotation).toEqual({ target: 0.25, summary: 0.1 });
    expect(effectiveSettings(env, {}, {})).toContainEqual({ key: 'engine.rotateTargetPercent', value: 25, source: 'default' });
    expect(() => engineLimits({ rotateTargetPercent: 95 })).toThrow(expect.objectContaining({ code: 'bad_request', message: 'the rotation target must be a percent from 20 to 90, got 95' }));
    expect(() => engineLimits({ rotateTargetPercent: 40, summaryPercent: 25 })).toThrow(expect.objectContaining({ code: 'bad_request', message: 'the summary share must be a percent from 5 to half the rotation target (20), got 25' }));
  });
});

describe("a route's provider model name", () => {
  it('config set takes real names and refuses what is not one, as rotate --resummarize --model does', () => {
    for (const name of ['gpt-4o', 'gemma3:27b', 'meta-llama/Llama-3.1-8B-Instruct', 'hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M', 'claude-3.5@2024']) {
      expect(parseValue('models.mgpt-1-27b.model', name), name).toEqual({ value: name });
    }
    for (const name of ['m'.repeat(201), '../../v1/keys', 'vendor/../keys', '/abs', 'gpt 4o', 'a\nb', '']) {
      const parsed = parseValue('models.mgpt-1-27b.model', name);
      expect(parsed, JSON.stringify(name)).toEqual({ error: expect.stringMatching(/^models\.mgpt-1-27b\.model (must be 1-200 characters|may hold only|may not have)/) });
      expect(providerModelProblem(name), JSON.stringify(name)).toBeDefined();
    }
  });
});

describe("a route's embeddings", () => {
  it('config set takes the embeddings keys with their kinds', () => {
    expect(parseValue('models.mgpt-1-27b.embeddings.model', 'nomic-embed-text')).toEqual({ value: 'nomic-embed-text' });
    expect(parseValue('models.mgpt-1-27b.embeddings.model', '../keys')).toEqual({ error: expect.stringMatching(/^models\.mgpt-1-27b\.embeddings\.model may hold only/) });
    expect(parseValue('models.mgpt-1-27b.embeddings.baseUrl', 'http://127.0.0.1:8081/v1/')).toEqual({ value: 'http://127.0.0.1:8081/v1' });
    expect(parseValue('models.mgpt-1-27b.embeddings.dimensions', '0')).toEqual({ error: 'models.mgpt-1-27b.embeddings.dimensions must be a positive integer' });
    expect(parseValue('models.mgpt-1-27b.embeddings.gguf', '/models/embed.gguf')).toEqual({ value: '/models/embed.gguf' });
    expect(parseValue('models.mgpt-1-27b.embeddings.size', '3')).toEqual({ error: expect.stringMatching(/unknown config key/) });
  });

  it('reach the route from a profile, and from MGPT_PROVIDER_EMBEDDINGS with MGPT_PROVIDER', () => {
    const file = { profiles: { default: { models: { 'mgpt-1-27b': { baseUrl: 'http://h/v1', embeddings: { model: 'e5', dimensions: 64 } } } } } };
    expect(resolveSettings(env, {}, file).route('mgpt-1-27b').embeddings).toEqual({ model: 'e5', dimensions: 64 });
    expect(resolveSettings(env, {}, {}).route('mgpt-1-27b').embeddings).toBeUndefined();
    const openai = { ...env, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: 'http://h/v1', MGPT_PROVIDER_EMBEDDINGS: 'nomic-embed-text' };
    expect(resolveSettings(openai, {}, {}).route('mgpt-1-27b').embeddings).toEqual({ model: 'nomic-embed-text' });
    const llama = { ...env, MGPT_PROVIDER: 'llama', MGPT_PROVIDER_MODEL: '/m.gguf', MGPT_PROVIDER_EMBEDDINGS: '/e.gguf' };
    expect(resolveSettings(llama, {}, {}).route('mgpt-1-27b').embeddings).toEqual({ gguf: '/e.gguf' });
    expect(resolveSettings({ ...env, MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: 'http://h/v1' }, {}, {}).route('mgpt-1-27b').embeddings).toBeUndefined();
  });
});
