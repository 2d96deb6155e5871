// The plan file of `payout-batch plan FILE --out PLAN`: the preflight, the rows to send and their
// quotes, tied to the batch file's exact bytes. `run --plan PLAN` executes exactly those rows and
// refuses when the batch file changed since (its sha256 differs) or the environment differs.
import { readFile, writeFile, rename } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { fileSha256 } from './identity.ts';
import { BatchRefused } from './session.ts';
import { accountOf } from './ledger.ts';
import type { BatchPlan } from './plan.ts';

export const PLAN_KIND = 'payout-batch-plan';

const PlanRow = z.object({
  rowNumber: z.number().int(),
  reference: z.string(),
  sourceCurrency: z.string(),
  sourceAmount: z.string(),
  rate: z.union([z.number(), z.string()]).optional(),
  fee: z.string().optional(),
  totalDeductible: z.string().optional(),
  destinationAmount: z.string().optional(),
});

const RowNote = z.object({ rowNumber: z.number().int(), code: z.string(), message: z.string() });

export const PlanFileSchema = z.object({
  kind: z.literal(PLAN_KIND),
  v: z.literal(1),
  createdAt: z.string(),
  file: z.string(),
  fileSha256: z.string().regex(/^[0-9a-f]{64}$/),
  batchId: z.string(),
  batchLabel: z.string().optional(),
  /** Who made the plan (`plan --prepared-by`, default the OS user): approvals by this name do not count (src/approvals). Absent in plans of older versions. */
  preparedBy: z.string().optional(),
  env: z.string(),
  baseUrl: z.string(),
  rows: z.array(PlanRow),
  currencies: z.array(z.record(z.string(), z.unknown())),
  warnings: z.array(z.string()),
  requests: z.record(z.string(), z.unknown()),
  // For the HTML report of a plan file (src/report): the batch's counts and the rows that are not
  // sent, with why. Optional: plans of older versions lack them; `run --plan` does not use them.
  rowsInBatch: z.number().int().optional(),
  valid: z.number().int().optional(),
  invalid: z.number().int().optional(),
  alreadyCreated: z.number().int().optional(),
  invalidRows: z.array(RowNote).optional(),
  notSent: z.array(RowNote).optional(),
  corridorsNotEnabled: z.array(z.record(z.string(), z.unknown())).optional(),
});
export type PlanFile = z.infer<typeof PlanFileSchema>;
export type PlanRow = z.infer<typeof PlanRow>;

export async function writePlanFile(path: string, plan: PlanFile): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, JSON.stringify(plan, null, 2) + '\n');
  await rename(tmp, path);
}

export async function readPlanFile(path: string): Promise<PlanFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new RangeError(`cannot read the plan ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new RangeError(`${path} is not a plan file (not JSON)`);
  }
  const r = PlanFileSchema.safeParse(data);
  if (!r.success)
    throw new RangeError(`${path} is not a plan file of payout-batch: ${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}`);
  return r.data;
}

/**
 * Refuses (exit 3) a plan whose batch file changed since, or that was made for another environment
 * or another service account (base URL): the account is part of what approvers sign.
 */
export async function verifyPlan(plan: PlanFile, file: string, env: string, baseUrl: string): Promise<void> {
  if (resolve(file) !== plan.file) {
    throw new BatchRefused(`the plan was made for ${plan.file}, not ${resolve(file)}: nothing was sent`, 'plan-other-file');
  }
  let sha: string;
  try {
    sha = await fileSha256(file);
  } catch (e) {
    throw new BatchRefused(
      `the plan's batch file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): nothing was sent`,
      'plan-file-missing',
    );
  }
  if (sha !== plan.fileSha256) {
    throw new BatchRefused(
      `${file} changed since the plan was made (${plan.createdAt}): nothing was sent. Make a new plan with \`payout-batch plan ${file} --out PLAN\`.`,
      'plan-file-changed',
    );
  }
  if (plan.env !== env)
    throw new BatchRefused(`the plan was made for the ${plan.env} environment, not ${env}: nothing was sent`, 'plan-other-env');
  // (the embedded sandbox of `local` listens on a new port at every start: its URL is no account)
  if (env !== 'local' && accountOf(plan.baseUrl) !== accountOf(baseUrl))
    throw new BatchRefused(`the plan was made for the service at ${plan.baseUrl}, not ${baseUrl}: nothing was sent`, 'plan-other-account');
}

/**
 * Refuses (exit 3) a batch whose rows, as loaded for the run, are not those of the plan: the file
 * is hashed again when it is loaded, and a file replaced between the plan's check and that read
 * must not pay amounts nobody planned or approved.
 */
export function verifyPlannedRows(
  plan: PlanFile,
  fileSha256: string,
  rows: ReadonlyMap<number, { reference: string; sourceCurrency: string; sourceAmount: { eq(x: string): boolean } } | undefined>,
): void {
  const changed = (why: string) =>
    new BatchRefused(`${plan.file} changed since the plan was made (${why}): nothing was sent`, 'plan-file-changed');
  if (fileSha256 !== plan.fileSha256) throw changed('its content hash differs');
  for (const r of plan.rows) {
    const p = rows.get(r.rowNumber);
    if (!p || p.reference !== r.reference || p.sourceCurrency !== r.sourceCurrency || !p.sourceAmount.eq(r.sourceAmount))
      throw changed(`row ${r.rowNumber} is not the planned ${r.reference}`);
  }
}

export function planFileOf(
  plan: BatchPlan,
  extra: { fileSha256: string; batchLabel?: string; baseUrl: string; rows: PlanRow[]; preparedBy?: string },
): PlanFile {
  return {
    kind: PLAN_KIND,
    v: 1,
    createdAt: new Date().toISOString(),
    file: plan.file,
    fileSha256: extra.fileSha256,
    batchId: plan.batchId,
    ...(extra.batchLabel ? { batchLabel: extra.batchLabel } : {}),
    ...(extra.preparedBy !== undefined ? { preparedBy: extra.preparedBy } : {}),
    env: plan.env,
    baseUrl: extra.baseUrl,
    rows: extra.rows,
    currencies: plan.currencies as unknown as Record<string, unknown>[],
    warnings: plan.warnings,
    requests: plan.requests,
    rowsInBatch: plan.rows,
    valid: plan.valid,
    invalid: plan.invalid,
    alreadyCreated: plan.alreadyCreated,
    invalidRows: [...plan.invalidRows].map(([rowNumber, i]) => ({ rowNumber, code: i.code, message: i.message })),
    notSent: [...plan.notSent].map(([rowNumber, i]) => ({ rowNumber, code: i.code, message: i.message })),
    corridorsNotEnabled: plan.corridorsNotEnabled,
  };
}
