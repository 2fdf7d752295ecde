import { AccountRepo } from './account-repo.js';
import { CalibrationRepo } from './calibration-repo.js';
import { PromptRepo } from './prompt-repo.js';
import { type Db, inTransaction, integrityCheck, type OpenOptions, openDatabase } from './db.js';
import { EntityRepo } from './entity-repo.js';
import { HistoryRepo } from './history-repo.js';
import { IdempotencyRepo } from './idempotency-repo.js';
import { ImportRepo } from './import-repo.js';
import { KeyRepo } from './key-repo.js';
import { LeaseRepo } from './lease-repo.js';
import { LogRepo } from './log-repo.js';
import { MemoryRepo } from './memory-repo.js';
import { VectorRepo } from './vector-repo.js';
import { RateRepo } from './rate-repo.js';
import { ResponseRepo } from './response-repo.js';
import { UniverseRepo } from './universe-repo.js';

/** The SQLite file and its synchronous repos: the internals SqliteStore wraps (and tests and the bench seed use). */
export class SqliteRepos {
  readonly entities: EntityRepo;
  readonly leases: LeaseRepo;
  readonly memory: MemoryRepo;
  readonly idempotency: IdempotencyRepo;
  readonly accounts: AccountRepo;
  readonly universes: UniverseRepo;
  readonly logs: LogRepo;
  readonly keys: KeyRepo;
  readonly rates: RateRepo;
  readonly calibration: CalibrationRepo;
  readonly history: HistoryRepo;
  readonly imports: ImportRepo;
  readonly prompts: PromptRepo;
  readonly responses: ResponseRepo;
  readonly vectors: VectorRepo;

  private readonly dataVersionStmt;

  constructor(readonly db: Db) {
    this.dataVersionStmt = db.prepare('PRAGMA data_version').pluck();
    this.entities = new EntityRepo(db);
    this.leases = new LeaseRepo(db);
    this.memory = new MemoryRepo(db);
    this.idempotency = new IdempotencyRepo(db);
    this.accounts = new AccountRepo(db);
    this.universes = new UniverseRepo(db);
    this.logs = new LogRepo(db);
    this.keys = new KeyRepo(db);
    this.rates = new RateRepo(db);
    this.calibration = new CalibrationRepo(db);
    this.history = new HistoryRepo(db);
    this.imports = new ImportRepo(db);
    this.prompts = new PromptRepo(db);
    this.responses = new ResponseRepo(db);
    this.vectors = new VectorRepo(db);
  }

  static open(path: string, opts: OpenOptions = {}): SqliteRepos {
    return new SqliteRepos(openDatabase(path, opts));
  }

  transaction<T>(fn: () => T): T {
    return inTransaction(this.db, fn);
  }

  /**
   * Runs `fn`'s reads in one read transaction: under WAL they all see the database as of the first,
   * whatever other connections commit meanwhile.
   */
  snapshot<T>(fn: () => T): T {
    return this.db.transaction(fn).deferred();
  }

  /** SQLite's data_version: changes when another connection commits (not on this one's own commits). */
  dataVersion(): number {
    return this.dataVersionStmt.get() as number;
  }

  /** Folds the WAL into the database file and truncates it, so no old page images remain there. */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  integrityCheck(): string {
    return integrityCheck(this.db);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
