import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { examples } from '../../help.js';
import { registerCreate } from './create.js';
import { registerDelete } from './delete.js';
import { registerList } from './list.js';
import { registerShow } from './show.js';
import { registerUpdate } from './update.js';

export function registerEntities(program: Command, ctx: CliContext): void {
  const entities = examples(program.command('entities').description('create, list, show, update and delete entities'), [
    'mgpt entities create --name ada --instructions "You are Ada."',
    'mgpt entities list',
    'mgpt entities show ada --json',
    'mgpt entities update ada --budget 8000',
    'mgpt entities delete ada --yes',
  ]);
  registerCreate(entities, ctx);
  registerList(entities, ctx);
  registerShow(entities, ctx);
  registerUpdate(entities, ctx);
  registerDelete(entities, ctx);
}
