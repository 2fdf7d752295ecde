import type { Command } from 'commander';
import { BadRequestError } from '../../core/errors.js';
import { bashScript } from '../completion/bash.js';
import { fishScript } from '../completion/fish.js';
import { commandTree, type CommandNode } from '../completion/tree.js';
import { zshScript } from '../completion/zsh.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';

const SHELLS: Record<string, (root: CommandNode) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript };

export function registerCompletion(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('completion')
      .description('print a shell completion script (bash, zsh or fish); it completes entity names and short ids too')
      .argument('<shell>', 'bash, zsh or fish'),
    [
      'mgpt completion bash > ~/.local/share/bash-completion/completions/mgpt',
      'mgpt completion zsh > "${fpath[1]}/_mgpt"',
      'mgpt completion fish > ~/.config/fish/completions/mgpt.fish',
      'source <(mgpt completion bash)',
    ],
  ).action((shell: string) => {
    const script = Object.hasOwn(SHELLS, shell) ? SHELLS[shell] : undefined;
    if (!script) throw new BadRequestError(`no completion for ${JSON.stringify(shell)}`, { hint: 'use bash, zsh or fish' });
    ctx.io.stdout.write(script(commandTree(program)));
  });
}
