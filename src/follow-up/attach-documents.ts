// `attach PAYOUT FILE...`: upload documents and attach them to a payout (spec §4.5, §4.6).
//
//   0. PAYOUT is the payout's id, its payoutRef or the row's reference: looked up (no request) in
//      the results file when one is given, then in the account's journals (payoutIdOf).
//   1. GET the payout. A final status (SUCCESSFUL, FAILED, REJECTED) is refused before anything is
//      uploaded, in the service's own words (INVALID_PAYOUT_STATUS); `force` sends anyway and
//      shows the service's answer as it comes.
//   2. Documents already on the payout + the new ones must stay within 5 (MAX_DOCUMENTS_PER_PAYOUT):
//      otherwise refused before uploading, unless `merge` (all files become one PDF, pdf-lib).
//   3. Each file: PDF, JPEG or PNG by its first bytes, at most 10 MB; uploaded (upload-url + PUT),
//      then one PATCH with all the documentUrls.
//   4. The payout read again and its new status (ADDITIONAL_INFO_REQUIRED becomes PENDING, under
//      review: spec §3) applied to its results file and journal, so `retry` and `status` count it
//      as the service does.
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import { plural } from '../text.ts';
import { mergeToPdf } from '../engine/upload-documents.ts';
import { isFinalStatus, MAX_DOCUMENT_BYTES, MAX_DOCUMENTS_PER_PAYOUT, type DocumentContentType } from '../spec/codes.ts';
import type { DocumentsPatchAnswer, PayoutAnswer } from '../client/answers.ts';
import { sniffDocumentType } from '../validation/document-files.ts';
import { eachBatch, type Ledger } from '../ledger/account-ledger.ts';
import { readResults } from '../results/results.ts';
import { batchColumns } from '../results/read.ts';
import { applyToResultsFile, type ApplyResult } from './apply-status.ts';
import { updateOf } from './refresh-status.ts';

export interface AttachOptions {
  client: PayoutClient;
  payoutId: string;
  files: string[];
  merge?: boolean;
  /** Send even when the payout's status forbids it (to see the service's own answer). */
  force?: boolean;
  logger?: Logger;
  /** The results file holding the payout's row (payoutIdOf): brought up to date after attaching. */
  resultsFile?: string;
  ledgers?: Ledger[];
}

/** Refused before anything was uploaded or attached. */
export class AttachRefused extends Error {
  override readonly name = 'AttachRefused';
  constructor(
    message: string,
    /** BAD_FILE, PAYOUT_NOT_FOUND: the files or the id are wrong; the others: the payout's state refuses them. */
    readonly code: 'INVALID_PAYOUT_STATUS' | 'MAX_DOCUMENTS_EXCEEDED' | 'BAD_FILE' | 'PAYOUT_NOT_FOUND',
  ) {
    super(message);
  }
}

/**
 * The payout id of `attach PAYOUT`, where PAYOUT is a payout id, a payoutRef or a row's reference:
 * the row of the results file (when given) whose payoutId, payoutRef or reference it is; else the
 * payout of the account's journals with that id, payoutRef or reference (and the results file its
 * journal names); else PAYOUT itself, an id the service answers for (get-payout). Refused when the
 * results file has no such row, or its row has no payout.
 */
export async function payoutIdOf(
  payout: string,
  o: { resultsFile?: string; ledgers?: Ledger[] },
): Promise<{ payoutId: string; resultsFile?: string }> {
  if (o.resultsFile) {
    const table = await readResults(o.resultsFile);
    const column = batchColumns(table).reference;
    const row = table.rows.find(
      (r) => [r.result.payoutId, r.result.payoutRef, column && r.cells[column]?.trim()].includes(payout) && payout !== '',
    );
    if (!row)
      throw new AttachRefused(`no row of ${o.resultsFile} has ${payout} as its payoutId, payoutRef or reference`, 'PAYOUT_NOT_FOUND');
    if (!row.result.payoutId)
      throw new AttachRefused(
        `row ${row.rowNumber} of ${o.resultsFile} (${payout}) has no payout (${row.result.status ?? 'no status'}): there is nothing to attach to`,
        'PAYOUT_NOT_FOUND',
      );
    return { payoutId: row.result.payoutId, resultsFile: o.resultsFile };
  }
  for await (const { folded } of eachBatch(o.ledgers ?? []))
    for (const s of folded.rows.values())
      if (s.payout && [s.payout.id, s.payout.payoutRef, s.ref].includes(payout))
        return { payoutId: s.payout.id, resultsFile: folded.header?.results };
  return { payoutId: payout };
}

export interface AttachResult {
  payout: PayoutAnswer;
  uploaded: { file: string; documentUrl: string; requestId: string }[];
  response: DocumentsPatchAnswer;
  merged: boolean;
  /** The FILE requests of an ADDITIONAL_INFO_REQUIRED payout these documents answer. */
  answers: string[];
  /** The payout's row in its results file, when one was found and could be written. */
  results?: ApplyResult;
}

interface LoadedFile {
  /** As the output names it: the path, or the paths merged into it. */
  shownAs: string;
  bytes: Uint8Array;
  contentType: DocumentContentType;
  filename: string;
}

async function loadFile(path: string): Promise<LoadedFile> {
  const st = await stat(path).catch((e: NodeJS.ErrnoException) => {
    throw new AttachRefused(`${path}: cannot read it (${e.code ?? e.message})`, 'BAD_FILE');
  });
  if (!st.isFile()) throw new AttachRefused(`${path}: not a file`, 'BAD_FILE');
  if (st.size > MAX_DOCUMENT_BYTES)
    throw new AttachRefused(`${path}: ${st.size} bytes; the service takes at most 10 MB per file`, 'BAD_FILE');
  const bytes = new Uint8Array(await readFile(path));
  const contentType = sniffDocumentType(bytes.subarray(0, 16));
  if (!contentType) throw new AttachRefused(`${path}: not a PDF, JPEG or PNG (by its first bytes)`, 'BAD_FILE');
  return { shownAs: path, bytes, contentType, filename: basename(path) };
}

/** All the files as one PDF (pdf-lib), named after the payout. */
async function mergedFile(files: LoadedFile[], payout: PayoutAnswer): Promise<LoadedFile> {
  const bytes = await mergeToPdf(files);
  if (bytes.byteLength > MAX_DOCUMENT_BYTES)
    throw new AttachRefused(`the merged PDF is ${bytes.byteLength} bytes; the service takes at most 10 MB per file`, 'BAD_FILE');
  const filename = `${(payout.payoutRef ?? payout.id).replace(/[^A-Za-z0-9._-]/g, '_')}-documents.pdf`;
  return { bytes, contentType: 'application/pdf', filename, shownAs: files.map((f) => f.shownAs).join(' + ') };
}

export async function attachDocuments(o: AttachOptions): Promise<AttachResult> {
  if (!o.files.length) throw new AttachRefused('name at least one file to attach', 'BAD_FILE');
  const files: LoadedFile[] = [];
  for (const f of o.files) files.push(await loadFile(f));

  let payout: PayoutAnswer;
  try {
    payout = await o.client.getPayout(o.payoutId);
  } catch (e) {
    if (e instanceof PayoutApiError && e.status === 404) {
      throw new AttachRefused(
        `PAYOUT_NOT_FOUND: no payout ${o.payoutId} for this key's business (request id ${e.requestId}); ` +
          'name the payout by the payoutId, payoutRef or reference of a row with its results file: `--results FILE`',
        'PAYOUT_NOT_FOUND',
      );
    }
    throw e;
  }
  const log = o.logger?.child({ payoutId: payout.id, payoutRef: payout.payoutRef });
  if (isFinalStatus(payout.status) && !o.force)
    throw new AttachRefused(
      `INVALID_PAYOUT_STATUS: documents can be added only while a payout is PENDING, ADDITIONAL_INFO_REQUIRED or PROCESSING; this payout is ${payout.status}. Nothing was uploaded.`,
      'INVALID_PAYOUT_STATUS',
    );
  const have = payout.supportingDocuments?.length ?? 0;
  const adding = o.merge ? 1 : files.length;
  if (have + adding > MAX_DOCUMENTS_PER_PAYOUT && !o.force) {
    const room = MAX_DOCUMENTS_PER_PAYOUT - have;
    throw new AttachRefused(
      `MAX_DOCUMENTS_EXCEEDED: the payout has ${plural(have, 'document')} and takes at most ${MAX_DOCUMENTS_PER_PAYOUT}; ` +
        `${adding} more would make ${have + adding}. ` +
        (room >= 1 && !o.merge ? 'Pass --merge to attach all the files as one PDF. ' : '') +
        'Nothing was uploaded.',
      'MAX_DOCUMENTS_EXCEEDED',
    );
  }

  const toUpload = o.merge && files.length > 1 ? [await mergedFile(files, payout)] : files;
  const uploaded: AttachResult['uploaded'] = [];
  for (const f of toUpload) {
    const r = await o.client.uploadDocument(f);
    uploaded.push({ file: f.shownAs, documentUrl: r.documentUrl, requestId: r.requestId });
    log?.info({ file: f.filename, requestId: r.requestId }, 'document uploaded');
  }
  const response = await o.client.patchDocuments(
    payout.id,
    uploaded.map((u) => u.documentUrl),
  );
  log?.info({ totalDocuments: response.totalDocuments }, 'documents attached');
  const answers =
    payout.status === 'ADDITIONAL_INFO_REQUIRED'
      ? (payout.informationRequests ?? []).filter((r) => r.type === 'FILE').map((r) => r.title)
      : [];
  return {
    payout,
    uploaded,
    response,
    merged: toUpload.length === 1 && files.length > 1,
    answers,
    results: await recordStatus(o, payout.id),
  };
}

/** Step 4: best effort, the documents are attached whatever happens here (logged). */
async function recordStatus(o: AttachOptions, payoutId: string): Promise<ApplyResult | undefined> {
  if (!o.resultsFile || !existsSync(o.resultsFile)) return undefined;
  try {
    const now = await o.client.getPayout(payoutId);
    return await applyToResultsFile(o.resultsFile, [updateOf(now)], { ledgers: o.ledgers, logger: o.logger });
  } catch (e) {
    o.logger?.warn({ payoutId, file: o.resultsFile, err: (e as Error).message }, 'results file not brought up to date');
    return undefined;
  }
}
