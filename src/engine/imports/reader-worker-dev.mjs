// The worker of reader-pool.ts when mgpt runs from source (tests, tsx): tsx's loader first, then
// the TypeScript module. The built package runs dist/import-reader.cjs instead.
import { register } from 'tsx/esm/api';

register();
await import('./reader-worker.ts');
