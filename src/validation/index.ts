// Validation of batch rows: field validators, per-method zod schemas, row and batch rules.
export {
  validateBatch,
  collectBatch,
  type ValidateOptions,
  type ValidatedRow,
  type BatchSummary,
  type BatchValidation,
  type CollectedBatch,
  type Corridor,
  type AmountTotal,
} from './batch.ts';
export { parseRow, accountKey, probableDuplicateKey, MASKED_FIELDS, TEXT_ONLY_FIELDS, type RowContext, type RowResult } from './row.ts';
export {
  PayoutRowSchema,
  BENEFICIARY_SCHEMAS,
  PayoutFieldsSchema,
  FIELD_CHECKS,
  METHOD_FIELD_CHECKS,
  methodFields,
  requiredFields,
  minDigits,
  type PayoutRow,
} from './schemas.ts';
export { parseAmount, readAmountText, type AmountResult } from './amount.ts';
export { checkDocumentFile, sniffDocumentType, type DocumentCheck } from './documents.ts';
export { PROBLEM_CODES, formatProblem, isError, type Problem, type ProblemCode, type Severity } from './problems.ts';
export * as fields from './fields.ts';
