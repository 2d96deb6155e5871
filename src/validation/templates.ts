// The templates under templates/ that `payout-batch template` copies: test/validation/generate-files.ts
// writes them from the method schemas (row-schemas.ts), and a test checks the committed files are its output.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PayoutMethod } from '../spec/codes.ts';
import { packageRoot } from '../package-root.ts';

export const templateFileName = (method: PayoutMethod | undefined, format: 'csv' | 'xlsx' | 'pain.001'): string =>
  format === 'pain.001'
    ? 'payout-template-pain001.xml' // one pain.001.001.09 with one example transaction, whatever the method
    : `payout-template-${method ? method.toLowerCase().replace(/_/g, '-') : 'all-methods'}.${format}`;

export const readTemplate = (method: PayoutMethod | undefined, format: 'csv' | 'xlsx' | 'pain.001'): Buffer =>
  readFileSync(join(packageRoot(), 'templates', templateFileName(method, format)));
