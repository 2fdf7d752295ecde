/** The node-llama-cpp release mgpt is built and tested against (package.json's peer dependency). */
export const LLAMA_VERSION = '3.22.1';

/** node-llama-cpp's prebuilt binary package for each `process.platform-process.arch` it ships one for. */
const PREBUILT: Readonly<Record<string, string>> = {
  'darwin-arm64': 'mac-arm64-metal',
  'darwin-x64': 'mac-x64',
  'linux-x64': 'linux-x64',
  'linux-arm64': 'linux-arm64',
  'linux-arm': 'linux-armv7l',
  'linux-riscv64': 'linux-riscv64',
  'win32-x64': 'win-x64',
  'win32-arm64': 'win-arm64',
};

/** The prebuilt binary package for this machine, or null where node-llama-cpp ships none. */
export function llamaPrebuilt(platform: string = process.platform, arch: string = process.arch): string | null {
  const name = PREBUILT[`${platform}-${arch}`];
  return name ? `@node-llama-cpp/${name}` : null;
}

/**
 * The build getLlama asks for: mgpt runs models on the CPU, but on Apple silicon node-llama-cpp's one
 * prebuilt build is the Metal one, and asking for `gpu: false` there finds no build at all.
 */
export function llamaGpu(platform: string = process.platform, arch: string = process.arch): 'metal' | false {
  return platform === 'darwin' && arch === 'arm64' ? 'metal' : false;
}

/**
 * The command that installs node-llama-cpp beside mgpt with this machine's prebuilt build.
 * --save-prod: mgpt declares it an optional peer, which npm never installs by itself (a plain
 * `npm install node-llama-cpp` in mgpt's folder adds nothing); --no-save keeps package.json and the
 * lockfile as they are; --ignore-scripts skips its install script, which only matters where there
 * is no prebuilt build. Where it ships none, its CLI builds llama.cpp from source (cmake and a C++
 * compiler). Not --omit=optional, which would also remove every other package's native builds.
 */
export function llamaInstallCommand(platform: string = process.platform, arch: string = process.arch): string {
  const install = `npm install --no-save --save-prod --ignore-scripts node-llama-cpp@${LLAMA_VERSION}`;
  const prebuilt = llamaPrebuilt(platform, arch);
  return prebuilt ? `${install} ${prebuilt}@${LLAMA_VERSION}` : `${install} && npx --no node-llama-cpp source download --gpu false`;
}
