// Type-checks the project (npm run typecheck, and npm test's pretest).
//
// node-llama-cpp is the user's optional install, not a dependency of mgpt, so a fresh clone does not
// have it. Where it is installed (CI installs it) the check uses its real types; where it is not,
// the check uses scripts/no-llama/node-llama-cpp.d.ts, which makes each name mgpt uses `any`, and
// says so, instead of failing on a library the developer never asked for.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(`${root}/package.json`);

function installed(name) {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

// Extra arguments go to tsc (the suite passes --listFilesOnly: it checks the choice, not the types again).
const args = ['--noEmit', ...process.argv.slice(2)];
if (!installed('node-llama-cpp')) {
  console.warn(
    'typecheck: node-llama-cpp is not installed, so the llama provider is checked against a stand-in\n' +
      '  (scripts/no-llama/node-llama-cpp.d.ts), not the library; CI checks it against the real one.',
  );
  args.push('-p', 'scripts/no-llama/tsconfig.json');
}
const tsc = require.resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
