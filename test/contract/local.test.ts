import { contractSuite } from './cases.js';
import { localTarget } from './harness.js';

contractSuite('local', localTarget);
