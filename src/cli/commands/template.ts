// Placeholder: replaced by the template command's implementation.
import { defineCommand, UsageError } from '../command.ts';

export default defineCommand({
  command: 'template',
  describe: '(template: not built yet)',
  builder: (y) => y,
  run: async () => {
    throw new UsageError('template is not built yet');
  },
});
