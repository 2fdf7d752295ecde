import type { AccountInfo, ImportOptions, ImportedEntity, NamePolicy, KeyInfo, LearnedLimits, LocalAdmin, NewPrompt } from '../core/backend.js';
import type { RateLimits } from '../core/rate-limits.js';
import type { ExportFormat } from '../core/wire/entity-types.js';
import type { StoredPromptInfo, UniverseDoc, UniverseSummary } from '../core/wire/universe-types.js';
import type { Engine } from '../engine/engine.js';

/** The local administration API over the embedded engine; `accountId` owns what import creates. */
export class EngineAdmin implements LocalAdmin {
  constructor(
    private readonly engine: Engine,
    private readonly accountId: string,
    private readonly names: NamePolicy = {},
  ) {}

  async listAccounts(): Promise<AccountInfo[]> {
    return this.engine.accounts.list();
  }
  async createAccount(name: string): Promise<AccountInfo> {
    return this.engine.accounts.create(name);
  }
  async topupAccount(id: string, usd: number): Promise<AccountInfo> {
    return this.engine.accounts.topup(id, usd);
  }
  async createKey(account: string, scopes: string[], limits?: Partial<RateLimits>): Promise<KeyInfo> {
    return this.engine.keys.create(account, scopes, limits);
  }
  async updateKey(id: string, limits: Partial<RateLimits>): Promise<KeyInfo> {
    return this.engine.keys.update(await this.engine.keys.resolve(id), limits);
  }
  async updateAccount(id: string, limits: Partial<RateLimits>): Promise<AccountInfo> {
    return this.engine.accounts.update(id, limits);
  }
  async listKeys(): Promise<KeyInfo[]> {
    return this.engine.keys.list();
  }
  async revokeKey(id: string): Promise<KeyInfo> {
    return this.engine.keys.revoke(await this.engine.keys.resolve(id));
  }
  async listPrompts(): Promise<StoredPromptInfo[]> {
    return this.engine.prompts.list();
  }
  async getPrompt(name: string): Promise<StoredPromptInfo> {
    return this.engine.prompts.get(name);
  }
  async addPrompt(name: string, prompt: NewPrompt, opts?: { force?: boolean }): Promise<StoredPromptInfo> {
    return this.engine.prompts.add(name, prompt, opts);
  }
  async removePrompt(name: string): Promise<void> {
    return this.engine.prompts.remove(name);
  }
  async importPrompts(dir: string): Promise<{ imported: string[]; skipped: string[] }> {
    return this.engine.prompts.importDir(dir);
  }
  async listUniverses(): Promise<UniverseSummary[]> {
    return this.engine.universes.list();
  }
  async getUniverse(id: string): Promise<UniverseSummary> {
    return this.engine.universes.summary(id);
  }
  async getUniverseDoc(id: string): Promise<UniverseDoc> {
    return this.engine.universes.doc(id);
  }
  async importEntity(bytes: Uint8Array, format: ExportFormat, opts?: ImportOptions): Promise<ImportedEntity> {
    return this.engine.entities.import(bytes, format, { ...this.names, ...opts }, this.accountId);
  }

  async learnedLimits(modelIds: string[]): Promise<Record<string, LearnedLimits | null>> {
    const rows = new Map((await this.engine.deps.calibration.list()).map((r) => [r.routeKey, r]));
    const out: Record<string, LearnedLimits | null> = {};
    for (const id of modelIds) {
      const r = rows.get((await this.engine.deps.chatModel(id)).routeKey);
      out[id] = r ? { contextTokens: r.contextTokens, contextSource: r.contextSource, factor: r.factor, samples: r.samples } : null;
    }
    return out;
  }
  async resetCalibration(modelId?: string): Promise<number> {
    const key = modelId === undefined ? undefined : (await this.engine.deps.chatModel(modelId)).routeKey;
    return this.engine.deps.calibration.reset(key);
  }
}
