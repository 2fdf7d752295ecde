import { localTarget, remoteTarget } from './harness.js';
import { rotationSuite } from './rotation-cases.js';

// The local backend, and the remote one over undici against mgpt serve on a real loopback port.
rotationSuite('local', localTarget);
rotationSuite('remote', remoteTarget);
