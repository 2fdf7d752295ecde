// The worker of large-writer.ts when mgpt runs from source (tests, tsx): tsx's loader first, then
// the TypeScript module. The built package runs dist/sqlite-writer.cjs instead.
import { register } from 'tsx/esm/api';

register();
await import('./large-write-worker.ts');
