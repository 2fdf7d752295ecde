import { contractSuite } from './cases.js';
import { remoteTarget } from './harness.js';

// The remote backend over undici against mgpt serve on a real 127.0.0.1 port.
contractSuite('remote', remoteTarget);
