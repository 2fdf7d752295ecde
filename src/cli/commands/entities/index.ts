import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { registerCreate } from './create.js';
import { registerDelete } from './delete.js';
import { registerList } from './list.js';
import { registerShow } from './show.js';

export function registerEntities(program: Command, ctx: CliContext): void {
  const entities = program.command('entities').description('create, list, show and delete entities');
  registerCreate(entities, ctx);
  registerList(entities, ctx);
  registerShow(entities, ctx);
  registerDelete(entities, ctx);
}
