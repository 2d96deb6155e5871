// Every command of the CLI, one module each.
import type { CliCommand } from '../command.ts';
import sandbox from './sandbox.ts';
import validate from './validate.ts';
import template from './template.ts';
import account from './account.ts';
import demo from './demo.ts';
import run from './run.ts';
import retry from './retry.ts';
import plan from './plan.ts';
import status from './status.ts';
import attach from './attach.ts';
import listen from './listen.ts';
import watch from './watch.ts';

export const commands: CliCommand[] = [demo, sandbox, validate, template, account];
commands.push(run);
commands.push(retry);
commands.push(plan);
commands.push(status, attach, listen, watch);
