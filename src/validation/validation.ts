// Validation of batch rows: what the other folders use of it.
export { validateBatch, type ValidateOptions, type ValidatedRow, type BatchSummary, type BatchValidation } from './batch.ts';
export { checkDocumentFile, type DocumentCheck } from './document-files.ts';
export { formatProblem, type Problem } from './problems.ts';
