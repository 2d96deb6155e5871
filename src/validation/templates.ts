// The batch templates are committed under templates/, one per method and one of all methods, as
// CSV and XLSX: `payout-batch template` copies them. Their columns come from the method schemas
// (schemas.ts); test/validation/generate-files.ts writes them, with one valid example row per
// method, and a test checks the committed files are what it writes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PayoutMethod } from '../spec/codes.ts';
import { packageRoot } from '../package-root.ts';

export const templateFileName = (method: PayoutMethod | undefined, format: 'csv' | 'xlsx' | 'pain.001'): string =>
  format === 'pain.001'
    ? 'payout-template-pain001.xml' // one pain.001.001.09 with one example transaction, whatever the method
    : `payout-template-${method ? method.toLowerCase().replace(/_/g, '-') : 'all-methods'}.${format}`;

/** A committed template's bytes. */
export const readTemplate = (method: PayoutMethod | undefined, format: 'csv' | 'xlsx' | 'pain.001'): Buffer =>
  readFileSync(join(packageRoot(), 'templates', templateFileName(method, format)));
