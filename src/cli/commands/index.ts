// Every command of the CLI, one module each.
import type { CliCommand } from '../command.ts';
import sandbox from './sandbox.ts';
import validate from './validate.ts';
import template from './template.ts';
import account from './account.ts';

export const commands: CliCommand[] = [sandbox, validate, template, account];
