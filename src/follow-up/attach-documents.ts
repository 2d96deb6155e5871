// `attach PAYOUT FILE...` (spec §4.5, §4.6): a final status or more than 5 documents is refused
// before any upload (`force` sends anyway, `merge` makes one PDF); then the payout's new status
// (under review: spec §3) goes to its results file and journal, so `retry` and `status` count it.
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import { plural } from '../text.ts';
import { mergeToPdf, RowStepError } from '../engine/upload-documents.ts';
import { isFinalStatus, MAX_DOCUMENT_BYTES, MAX_DOCUMENTS_PER_PAYOUT } from '../spec/codes.ts';
import type { PayoutAnswer } from '../client/answers.ts';
import { checkDocumentFile, readDocumentForUpload } from '../validation/document-files.ts';
import { appendToBatch, foldAll, type BatchFold, type Ledger } from '../ledger/account-ledger.ts';
import { documentsToAttach } from '../journal/lines.ts';
import type { JournalEvent } from '../journal/journal.ts';
import { withResults } from '../results/results.ts';
import type { ResultRow } from '../results/types.ts';
import { batchColumns } from '../results/read.ts';
import { applyStatus, clearDocumentsError, type ApplyResult } from './apply-status.ts';
import { sha256Hex } from '../engine/identity.ts';
import { updateOf } from './refresh-status.ts';
import { refuseRowApart } from '../engine/retry-batch.ts';

interface AttachOptions {
  client: PayoutClient;
  payoutId: string;
  files: string[];
  merge?: boolean;
  /** Send even when the status forbids it (to see the service's own answer). */
  force?: boolean;
  logger?: Logger;
  /** Brought up to date after attaching. */
  resultsFile?: string;
  ledgers?: Ledger[];
}

export class AttachRefused extends Error {
  override readonly name = 'AttachRefused';
  constructor(
    message: string,
    readonly code: 'INVALID_PAYOUT_STATUS' | 'MAX_DOCUMENTS_EXCEEDED' | 'BAD_FILE' | 'PAYOUT_NOT_FOUND',
  ) {
    super(message);
  }
}

/**
 * PAYOUT is a payout id, payoutRef or row reference: found (no request) in the results file when
 * given, else in the account's journals (with the results file its journal names), else PAYOUT.
 */
export async function payoutIdOf(
  payout: string,
  o: { resultsFile?: string; ledgers?: Ledger[] },
): Promise<{ payoutId: string; resultsFile?: string }> {
  if (o.resultsFile) {
    const [row, column, named] = await withResults(o.resultsFile, {}, async (table) => {
      const column = batchColumns(table, o.resultsFile).reference;
      const named = new Set<string>();
      let found: ResultRow | undefined;
      for await (const r of table.rows) {
        const ref = column && r.cells[column]?.trim();
        if (ref) named.add(ref);
        if (!found && payout !== '' && [r.result.payoutId, r.result.payoutRef, ref].includes(payout)) found = r;
      }
      return [found, column, named] as const;
    });
    if (!row)
      throw new AttachRefused(`no row of ${o.resultsFile} has ${payout} as its payoutId, payoutRef or reference`, 'PAYOUT_NOT_FOUND');
    if (!row.result.payoutId)
      throw new AttachRefused(
        `row ${row.rowNumber} of ${o.resultsFile} (${payout}) has no payout (${row.result.status ?? 'no status'}): there is nothing to attach to`,
        'PAYOUT_NOT_FOUND',
      );
    const folds = (await foldAll(o.ledgers ?? [])).map((b) => b.folded);
    const id = row.result.payoutId;
    const s = folds.flatMap((f) => [...f.rows.values()]).find((s) => [s.payout, ...(s.earlier ?? [])].some((p) => p?.id === id));
    refuseRowApart(o.resultsFile, row, column, s, folds, named);
    return { payoutId: id, resultsFile: o.resultsFile };
  }
  for (const { folded } of await foldAll(o.ledgers ?? []))
    for (const s of folded.rows.values())
      if (s.payout && [s.payout.id, s.payout.payoutRef, s.ref].includes(payout))
        return { payoutId: s.payout.id, resultsFile: folded.header?.results };
  return { payoutId: payout };
}

/** `shownAs`: the path, or the paths merged into it. */
type LoadedFile = Parameters<PayoutClient['uploadDocument']>[0] & { shownAs: string; sha256: string };

async function loadFile(path: string): Promise<LoadedFile> {
  const r = checkDocumentFile(path);
  if (!r.ok) throw new AttachRefused(r.message, 'BAD_FILE');
  const f = await readDocumentForUpload(path, r.fingerprint);
  if (!f.ok) throw new AttachRefused(f.message, 'BAD_FILE');
  return { shownAs: path, bytes: f.bytes, contentType: f.contentType, filename: f.filename, sha256: r.fingerprint.sha256 };
}

async function mergedFile(files: LoadedFile[], payout: PayoutAnswer): Promise<LoadedFile> {
  const bytes = await mergeToPdf(files).catch((e: unknown) => {
    throw e instanceof RowStepError ? new AttachRefused(`${e.message}. Nothing was uploaded.`, 'BAD_FILE') : e;
  });
  if (bytes.byteLength > MAX_DOCUMENT_BYTES)
    throw new AttachRefused(`the merged PDF is ${bytes.byteLength} bytes; the service takes at most 10 MB per file`, 'BAD_FILE');
  const filename = `${(payout.payoutRef ?? payout.id).replace(/[^A-Za-z0-9._-]/g, '_')}-documents.pdf`;
  return { bytes, contentType: 'application/pdf', filename, shownAs: files.map((f) => f.shownAs).join(' + '), sha256: sha256Hex(bytes) };
}

export async function attachDocuments(o: AttachOptions) {
  if (!o.files.length) throw new AttachRefused('name at least one file to attach', 'BAD_FILE');
  // (one document named twice, by any path, is uploaded and attached once: it would take two of the 5 places)
  const files = (await Promise.all(o.files.map(loadFile))).filter((f, i, all) => all.findIndex((x) => x.sha256 === f.sha256) === i);
  // two attaches at once (a cron retry and a person, two hosts of a team ledger) would both upload and attach: under the payout's
  // lock in the ledger whose journal holds it, the second reads what the first attached and sends nothing for it
  const home = (await foldAll(o.ledgers ?? [])).find((b) => [...b.folded.rows.values()].some((s) => s.payout?.id === o.payoutId));
  const job = () => attachFiles(o, files, home);
  return home ? home.ledger.lock(`attach-${sha256Hex(o.payoutId).slice(0, 16)}`, job) : job();
}

async function attachFiles(o: AttachOptions, files: LoadedFile[], home: BatchFold | undefined) {
  const payout = await o.client.getPayout(o.payoutId).catch((e: unknown) => {
    if (!(e instanceof PayoutApiError) || e.status !== 404) throw e;
    throw new AttachRefused(
      `PAYOUT_NOT_FOUND: no payout ${o.payoutId} for this key's business (request id ${e.requestId}); ` +
        'name the payout by the payoutId, payoutRef or reference of a row with its results file: `--results FILE`',
      'PAYOUT_NOT_FOUND',
    );
  });
  const log = o.logger?.child({ payoutId: payout.id, payoutRef: payout.payoutRef });
  if (isFinalStatus(payout.status) && !o.force)
    throw new AttachRefused(
      `INVALID_PAYOUT_STATUS: documents can be added only while a payout is PENDING, ADDITIONAL_INFO_REQUIRED or PROCESSING; this payout is ${payout.status}. Nothing was uploaded.`,
      'INVALID_PAYOUT_STATUS',
    );
  // The account's journals know each document uploaded (its documentUrl by the sha256 of its bytes), passed again to any payout
  // (spec §4.6: stable); the payout's own list says which it holds, whoever attached them: none is attached twice.
  const folds = await foldAll(o.ledgers ?? []);
  const held = new Map((payout.supportingDocuments ?? []).flatMap((d) => (d.url ? [[d.url, d] as const] : [])));
  // (two batches upload the same bytes under two documentUrls: the one this payout holds, if any)
  const known = new Map<string, string>();
  for (const [sha256, url] of folds.flatMap((b) => [...b.folded.uploads])) if (!held.has(known.get(sha256) ?? '')) known.set(sha256, url);
  const isHeld = (f: LoadedFile) => held.has(known.get(f.sha256) ?? '');
  const parts = files.filter((f) => !isHeld(f));
  const sending = o.merge && parts.length > 1 ? [await mergedFile(parts, payout)] : parts;
  const already = [...files, ...sending].filter(isHeld).map((f) => {
    const d: { url?: string; uploadedAt?: unknown } = held.get(known.get(f.sha256)!)!;
    return { file: f.shownAs, documentUrl: d.url!, uploadedAt: typeof d.uploadedAt === 'string' ? d.uploadedAt : undefined };
  });
  const toAttach = sending.filter((f) => !isHeld(f));
  const [have, adding] = [payout.supportingDocuments?.length ?? 0, toAttach.length];
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

  const upload = async (f: LoadedFile) => {
    const { documentUrl, requestId } = await o.client.uploadDocument(f);
    log?.info({ file: f.filename, requestId }, 'document uploaded');
    // durable before the PATCH: a run after a crash finds it on the payout, never uploads nor attaches it again
    if (home) await journalDurably(home, { t: 'doc', sha256: f.sha256, url: documentUrl });
    return { documentUrl, requestId };
  };
  /** Attached by this run; `requestId`: uploaded by it (none: a documentUrl the account's journals hold). */
  const uploaded: { file: string; documentUrl: string; requestId?: string }[] = [];
  for (const f of toAttach)
    uploaded.push({ file: f.shownAs, ...(known.has(f.sha256) ? { documentUrl: known.get(f.sha256)! } : await upload(f)) });
  const urls = uploaded.map((u) => u.documentUrl);
  const response = urls.length ? await o.client.patchDocuments(payout.id, urls) : undefined;
  if (response) log?.info({ totalDocuments: response.totalDocuments }, 'documents attached');
  // the FILE information requests these documents answer; none sent: the service holds them all, the requests stay open
  const requests =
    payout.status === 'ADDITIONAL_INFO_REQUIRED'
      ? (payout.informationRequests ?? []).filter((r) => r.type === 'FILE').map((r) => r.title)
      : [];
  return {
    payout,
    uploaded,
    already,
    totalDocuments: response?.totalDocuments ?? have,
    /** How many files were merged into the one PDF attached (0: none). */
    merged: toAttach.length === 1 && parts.length > 1 ? parts.length : 0,
    answers: urls.length ? requests : [],
    stillAsks: urls.length ? [] : requests,
    results: await recordStatus(o, payout.id, home),
  };
}

/** Fsynced, and through to a team ledger. */
async function journalDurably(home: BatchFold, line: JournalEvent): Promise<void> {
  appendToBatch(home.ledger, home.batchId, [line], { sync: true });
  await home.ledger.flush();
}

/** Best effort: the documents are attached whatever happens here. */
async function recordStatus(o: AttachOptions, payoutId: string, home: BatchFold | undefined): Promise<ApplyResult | undefined> {
  const s = home && [...home.folded.rows.values()].find((x) => x.payout?.id === payoutId);
  const [owed, file] = [s ? documentsToAttach(s) : [], o.resultsFile && existsSync(o.resultsFile) ? o.resultsFile : undefined];
  if (!owed.length && !file) return undefined;
  try {
    const now = await o.client.getPayout(payoutId);
    // the extra documents its run still owed all held now: journalled attached, and its row no longer says they are missing
    const held = new Set((now.supportingDocuments ?? []).map((d) => d.url));
    if (home && s && owed.length && owed.every((u) => held.has(u))) {
      await journalDurably(home, { t: 'patched', ref: s.ref, payoutId, documents: [], at: new Date().toISOString() });
      if (file) await clearDocumentsError(file, payoutId);
    }
    if (!file) return undefined;
    return await applyStatus([{ file }], [updateOf(now)], { ledgers: o.ledgers, logger: o.logger });
  } catch (e) {
    o.logger?.warn({ payoutId, file: o.resultsFile, err: (e as Error).message }, 'results file not brought up to date');
    return undefined;
  }
}
