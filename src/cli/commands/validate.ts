// Placeholder: replaced by the validate command's implementation.
import { defineCommand, UsageError } from '../command.ts';

export default defineCommand({
  command: 'validate',
  describe: '(validate: not built yet)',
  builder: (y) => y,
  run: async () => {
    throw new UsageError('validate is not built yet');
  },
});
