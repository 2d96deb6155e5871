// Placeholder: replaced by the sandbox command's implementation.
import { defineCommand, UsageError } from '../command.ts';

export default defineCommand({
  command: 'sandbox',
  describe: '(sandbox: not built yet)',
  builder: (y) => y,
  run: async () => {
    throw new UsageError('sandbox is not built yet');
  },
});
