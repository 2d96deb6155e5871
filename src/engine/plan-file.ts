// The plan file of `plan FILE --out PLAN`: the rows with the initiate body each is sent with (spec
// §4.2, less the upload's URL), their documents' sha256 and quotes, tied to the file's bytes and sheet.
// `run --plan` sends exactly those bodies or nothing.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as z from 'zod';
import { InitiateRequest } from '../spec/schemas.ts';
import { maskAccount } from '../mask.ts';
import { canonicalJson } from '../text.ts';
import { formatAmount, fromApi } from '../money.ts';
import type { FoldedJournal } from '../journal/lines.ts';
import { initiateBody } from './execute.ts';
import { fileSha256, sha256Hex } from './identity.ts';
import { BatchRefused, BatchUnusable } from './engine-errors.ts';
import { accountOf } from '../ledger/account-ledger.ts';
import { RequestCostSchema, type BatchPlan } from './batch-plan.ts';
import { rowByNumber, type EngineRow, type LoadedBatch } from './prepare.ts';
import { attempt } from '../files/attempt.ts';
import type { RowList } from '../files/spill.ts';
import { SwapProposalSchema } from './swap.ts';
import type { Screened } from './screen-batch.ts';
import { unsettledBody } from './session.ts';

export const PLAN_KIND = 'payout-batch-plan';
const PLAN_VERSION = 2;

const PlanRow = z.object({
  rowNumber: z.number().int(),
  reference: z.string(),
  sourceCurrency: z.string(),
  sourceAmount: z.string(),
  /** The initiate body but for `supportingDocument` (the upload's URL, known only then). */
  body: InitiateRequest.omit({ supportingDocument: true }),
  documents: z.array(z.object({ file: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
  rate: z.union([z.number(), z.string()]).optional(),
  fee: z.string().optional(),
  totalDeductible: z.string().optional(),
  destinationAmount: z.string().optional(),
  /** Whom the money is for behind the beneficiary (PayoutRow.ultimateCreditor): never sent, signed and shown. */
  ultimateCreditor: z.string().optional(),
  /** The payer it is sent on behalf of (a pain.001's UltmtDbtr/Nm): never sent, signed and shown beside the body's remitterAddress. */
  ultimateDebtor: z.string().optional(),
});

const RowNote = z.object({ rowNumber: z.number().int(), code: z.string(), message: z.string() });

const PlanFileSchema = z.object({
  kind: z.literal(PLAN_KIND),
  v: z.literal(PLAN_VERSION),
  createdAt: z.string(),
  file: z.string(),
  fileSha256: z.string().regex(/^[0-9a-f]{64}$/),
  batchId: z.string(),
  batchLabel: z.string().optional(),
  /** `plan --prepared-by`: approvals by this name do not count (src/approvals). */
  preparedBy: z.string().optional(),
  /** Excel: the sheet `run --plan` reads. */
  sheet: z.string().optional(),
  /** CSV: the --encoding `run --plan` reads with (unless given another). */
  encoding: z.string().optional(),
  /** --allow-duplicate-rows: the rows of one payee and amount planned, which `run --plan` reads so too. */
  allowDuplicateRows: z.literal(true).optional(),
  /** pain.001: the message id and version the ERP sent (shown to approvers). */
  message: z.object({ id: z.string(), version: z.string() }).optional(),
  /** pain.001: the --documents folder (absolute) `run --plan` reads again. */
  documents: z.string().optional(),
  env: z.string(),
  baseUrl: z.string(),
  /** accountOf(baseUrl). */
  account: z.string(),
  rows: z.array(PlanRow),
  currencies: z.array(z.record(z.string(), z.unknown())),
  warnings: z.array(z.string()),
  requests: RequestCostSchema,
  // for the HTML report only (src/report)
  rowsInBatch: z.number().int(),
  valid: z.number().int(),
  invalid: z.number().int(),
  alreadyCreated: z.number().int(),
  invalidRows: z.array(RowNote),
  notSent: z.array(RowNote),
  corridorsNotEnabled: z.array(z.record(z.string(), z.unknown())),
  /** spec §4.7: `run --plan` sends exactly these (recomputed only within its rate tolerance). */
  swaps: z.array(SwapProposalSchema).optional(),
  /** The screening approvers sign: `run --plan` screens again and refuses other lists, a new hit or another clearance. */
  screening: z
    .object({
      lists: z.array(z.object({ path: z.string(), format: z.string(), digest: z.string(), entries: z.number(), date: z.string() })),
      held: z.array(z.object({ rowNumber: z.number().int(), reference: z.string(), hits: z.array(z.record(z.string(), z.unknown())) })),
      cleared: z.array(z.object({ rowNumber: z.number().int(), clearances: z.array(z.string()) })),
    })
    .optional(),
});
export type PlanFile = z.infer<typeof PlanFileSchema>;
export type PlanRow = z.infer<typeof PlanRow>;

export async function readPlanFile(path: string): Promise<PlanFile> {
  const text = await readFile(path, 'utf8').catch((e: unknown) => {
    throw new BatchUnusable('PLAN_FILE', `cannot read the plan ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  });
  return parsePlanFile(text, path);
}

export function parsePlanFile(text: string, path: string): PlanFile {
  const make = 'make one with `payout-batch plan FILE --out PLAN`';
  const data = attempt((): unknown => JSON.parse(text));
  if (data === undefined) throw new BatchUnusable('PLAN_FILE', `${path} is not a plan file (not JSON): ${make}`);
  const r = PlanFileSchema.safeParse(data);
  if (r.success) return r.data;
  const i = r.error.issues[0];
  throw new BatchUnusable(
    'PLAN_FILE',
    `${path} is not a plan file of payout-batch: ${i?.path.join('.') || 'top level'}: ${i?.message}: ${make}`,
  );
}

/** sha256 of an initiate body's canonical JSON without the upload's URL (documents are signed by their bytes). */
export function bodyDigest(body: object): string {
  const { supportingDocument: _url, ...rest } = body as { supportingDocument?: unknown };
  return sha256Hex(canonicalJson(rest));
}

const ACCOUNT_FIELDS = ['iban', 'accountNumber', 'fpsId', 'phoneNumber', 'email', 'alipayId', 'wechatUserId', 'openId'] as const;

/** Who a planned row pays, as approvals and the report show it: every account its body names (SWIFT: IBAN and accountNumber), masked. */
export type Payee = ReturnType<typeof payeeOf>;

export function payeeOf(r: PlanRow) {
  const b = r.body;
  const accounts = ACCOUNT_FIELDS.flatMap((f) => b.beneficiary[f] || []);
  return {
    rowNumber: r.rowNumber,
    reference: r.reference,
    beneficiary: b.beneficiary.accountName,
    account: accounts.map(maskAccount).join(' / '),
    method: b.method,
    currency: b.sourceCurrency,
    amount: formatAmount(fromApi(b.sourceAmount), b.sourceCurrency),
    ...(r.ultimateCreditor !== undefined && { ultimateCreditor: r.ultimateCreditor }), // (none: as plans before it were signed)
    ...(r.ultimateDebtor !== undefined && { ultimateDebtor: r.ultimateDebtor }),
    ...(b.remitterAddress !== undefined && { remitterAddress: b.remitterAddress }),
  };
}

/** Whom a payee is paid on behalf of, as approvers read it: '' where the plan names nobody (the business pays). */
export const onBehalfOf = (p: Payee): string =>
  p.ultimateDebtor || p.remitterAddress
    ? `on behalf of ${p.ultimateDebtor ?? 'the payer'}${p.remitterAddress ? ` at ${p.remitterAddress}` : ''}`
    : '';

/** Refuses a plan run with another --sheet, a changed batch file, another environment or service account, or documents merged. */
export async function verifyPlan(plan: PlanFile, file: string, env: string, baseUrl: string, sheet?: string, merge = false) {
  // (approvers signed each file's bytes: a PDF merged of them is bytes nobody signed)
  const merged = merge && plan.rows.find((r) => r.documents.length > 1);
  if (merged)
    throw new BatchRefused(
      `the plan sends each document as its approvers signed it: --merge-documents would send a PDF of ${merged.documents.length} files of ${merged.reference} instead: nothing was sent`,
      'plan-merged-documents',
    );
  if (sheet !== undefined && sheet.toLowerCase() !== plan.sheet?.toLowerCase())
    throw new BatchRefused(
      `the plan was made from ${plan.sheet ? `the sheet "${plan.sheet}"` : 'a file without sheets'}, not "${sheet}" (a plan reads its own sheet: leave --sheet out): nothing was sent`,
      'plan-other-sheet',
    );
  if (resolve(file) !== plan.file) {
    throw new BatchRefused(`the plan was made for ${plan.file}, not ${resolve(file)}: nothing was sent`, 'plan-other-file');
  }
  const sha = await fileSha256(file).catch((e: unknown) => {
    throw new BatchRefused(
      `the plan's batch file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): nothing was sent`,
      'plan-file-missing',
    );
  });
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
 * Refuses a batch that would not send exactly the planned bodies: the file hashed again as loaded
 * (replaced since verifyPlan?), each row's body and documents, and an unsettled row's journalled body.
 */
export function verifyPlannedRows(
  plan: PlanFile,
  batch: Pick<LoadedBatch, 'documents' | 'identity'> & { rows: RowList<EngineRow> },
  folded: FoldedJournal | undefined,
): void {
  const changed = (why: string) =>
    new BatchRefused(`${plan.file} changed since the plan was made (${why}): nothing was sent`, 'plan-file-changed');
  if (batch.identity.fileSha256 !== plan.fileSha256) throw changed('its content hash differs');
  const rowOf = rowByNumber(batch.rows);
  for (const r of plan.rows) {
    const row = rowOf(r.rowNumber);
    const p = row?.payout;
    const planned = bodyDigest(r.body);
    // (an unsettled row is resent with its journalled body, whatever its cells say: the plan holds that body)
    const sent = unsettledBody<object>(folded?.rows.get(r.reference));
    if (sent && bodyDigest(sent) !== planned)
      throw new BatchRefused(
        `${r.reference} was sent before with another body than the planned one, and its outcome is not known: the plan cannot be run over it: nothing was sent`,
        'plan-file-changed',
      );
    if (
      !p ||
      p.reference !== r.reference ||
      bodyDigest(sent ?? initiateBody(p)) !== planned ||
      p.ultimateCreditor?.name !== r.ultimateCreditor ||
      (row?.cells.UltmtDbtr || undefined) !== r.ultimateDebtor // (the UltmtDbtr the pain.001 reader writes)
    )
      throw changed(`row ${r.rowNumber} does not give the planned body of ${r.reference}`);
    const docs = p.documents.map((d) => batch.documents?.get(d)?.sha256);
    if (docs.length !== r.documents.length || r.documents.some((d, i) => d.sha256 !== docs[i]))
      throw changed(`the documents of ${r.reference} are not the planned ones`);
  }
}

export function planFileOf(
  plan: BatchPlan,
  extra: Pick<
    PlanFile,
    'fileSha256' | 'batchLabel' | 'sheet' | 'encoding' | 'allowDuplicateRows' | 'documents' | 'baseUrl' | 'rows' | 'preparedBy'
  >,
): PlanFile {
  return {
    kind: PLAN_KIND,
    v: PLAN_VERSION,
    createdAt: new Date().toISOString(),
    file: plan.file,
    batchId: plan.batchId,
    ...(plan.message ? { message: plan.message } : {}),
    env: plan.env,
    account: accountOf(extra.baseUrl),
    // (those not given are left out of the file: JSON has no undefined)
    ...extra,
    currencies: plan.currencies,
    warnings: plan.warnings,
    requests: plan.requests,
    rowsInBatch: plan.rows,
    valid: plan.valid,
    invalid: plan.invalid,
    alreadyCreated: plan.alreadyCreated,
    invalidRows: [...plan.invalidRows].map(([rowNumber, i]) => ({ rowNumber, code: i.code, message: i.message })),
    notSent: [...plan.notSent].map(([rowNumber, i]) => ({ rowNumber, code: i.code, message: i.message })),
    corridorsNotEnabled: plan.corridorsNotEnabled,
    ...(plan.swaps.length ? { swaps: plan.swaps } : {}),
    ...(plan.screening ? { screening: screeningRecord(plan.screening) } : {}),
  };
}

function screeningRecord(s: Screened): NonNullable<PlanFile['screening']> {
  return {
    lists: s.lists.map((l) => ({ path: l.path, format: l.format, digest: l.digest, entries: l.entries, date: l.date })),
    held: [...s.held].map(([rowNumber, h]) => ({ rowNumber, reference: h.reference, hits: h.hits.map((x) => ({ ...x })) })),
    cleared: [...s.cleared].map(([rowNumber, cs]) => ({ rowNumber, clearances: cs.map((c) => c.id) })),
  };
}

/** Why a run's screening is not the one the approvers signed (lists, a row held now, other clearances). */
export function screeningChanged(planned: PlanFile['screening'], now: Screened | undefined, allowPartial: boolean): string | undefined {
  const digests = (d: string[]) => d.sort().join(',');
  if (digests(planned?.lists.map((l) => l.digest) ?? []) !== digests(now?.lists.map((l) => l.digest) ?? []))
    return planned
      ? `the plan was screened against ${planned.lists.map((l) => `${l.path} (sha256 ${l.digest.slice(0, 16)}…)`).join(', ')}, not the --sanctions-list given now: give the same lists, or make and approve a new plan`
      : 'the plan was made without sanctions lists: make and approve a new plan screened against them';
  if (planned?.held.length && !allowPartial)
    return `the plan leaves out ${planned.held.length} rows held by sanctions screening (HELD_SCREENING): pass --allow-partial to send the others`;
  const held = [...(now?.held.keys() ?? [])];
  if (held.length) return `rows ${held.join(', ')} of the plan hit the sanctions lists now: make and approve a new plan`;
  const cleared = (rows: [number, string[]][]) => JSON.stringify(rows.sort(([a], [b]) => a - b));
  if (
    cleared(planned?.cleared.map((c) => [c.rowNumber, c.clearances]) ?? []) !==
    cleared([...(now?.cleared ?? [])].map(([n, cs]) => [n, cs.map((c) => c.id)]))
  )
    return 'the clearances of the sanctions hits are not those the plan was approved with: make and approve a new plan';
  return undefined;
}
