// The run loop and a row's life: quote -> upload documents -> initiate -> PATCH the other
// documents, every step appended to the journal, the initiate fsynced before it leaves (with its
// key and exact body) and after its answer. Rows run in parallel through the one client (which
// throttles); a row's own steps run in order.
//
//   I1  keys are deterministic (identity.ts) and written before the request is sent
//   I2  an unknown outcome is resent only with the journalled key and byte-identical body
//   I3  a definitive refusal may be sent again (retry) under attempt + 1, a new key
//   I5  409 IDEMPOTENCY_KEY_CONFLICT is CONFLICT, never resent
import { basename } from 'node:path';
import pLimit from 'p-limit';
import { PDFDocument } from 'pdf-lib';
import type { PayoutClient } from '../client/client.ts';
import { PayoutApiError } from '../client/errors.ts';
import type { JournalWriter } from '../journal/journal.ts';
import { applyEvent, rowState, type ErrorSnapshot, type FoldedJournal, type RowEvent, type RowState } from '../journal/rows.ts';
import { toApi } from '../money.ts';
import type { DocumentContentType } from '../spec/codes.ts';
import type { InitiateRequest } from '../spec/schemas.ts';
import { readDocumentForUpload, type DocumentFingerprint } from '../validation/documents.ts';
import type { PayoutRow } from '../validation/schemas.ts';
import { startCheckpoints } from './checkpoints.ts';
import { completeCreated, sentPayout, snapshotOf } from './created.ts';
import { documentFinisher } from './finish-documents.ts';
import { idempotencyKey } from './identity.ts';
import { ENGINE_STATUSES, isCreatedStatus, outcomeFromState, type RowOutcome } from './outcome.ts';

export type EngineEvent =
  | { type: 'row-start'; rowNumber: number; reference: string; attempt: number; settling: boolean }
  | {
      type: 'row-done';
      rowNumber: number;
      reference: string;
      status: string;
      key?: string;
      requestId?: string;
      payoutId?: string;
      errorCode?: string;
      message?: string;
    }
  | { type: 'halted'; reason: string }
  | { type: 'settle-pass'; rows: number };

export interface WorkItem {
  rowNumber: number;
  payout: PayoutRow;
}

export interface ExecuteOptions {
  client: PayoutClient;
  writer: JournalWriter;
  folded: FoldedJournal;
  batchId: string;
  env: string;
  /** 'run': a row refused before stays refused (FAILED_TO_SEND); 'retry': it goes again under attempt + 1. */
  mode: 'run' | 'retry';
  quote: boolean;
  mergeDocuments: boolean;
  /** What validation saw of each document (absolute path); the upload reads the same file or none. */
  documents?: Map<string, DocumentFingerprint>;
  concurrency?: number;
  onEvent?: (e: EngineEvent) => void;
  /** Aborted: no new row starts (rows in flight finish, so no outcome is left unknown by us). */
  stop?: AbortSignal;
  /** Called every `checkpointMs` or less often (checkpoints.ts) with the outcomes so far (the results file is rewritten). */
  checkpoint?: () => Promise<void>;
  checkpointMs?: number;
  /** Resend pass for rows still unknown at the end: how many and how long to wait first. */
  settlePasses?: number;
  settleDelayMs?: number;
  /** Created rows whose payouts still lack documents: attached after the rows to send (finish-documents.ts). */
  finish?: FinishItem[];
  now?: () => Date;
  /**
   * Writes a fresh attempt's `initiating` record under the account's ledger lock, while this run's
   * reservation of the reference holds (ledger.ts); throws when it no longer does (nothing sent).
   */
  guard?: (ref: string, write: () => void) => Promise<void>;
  /**
   * retry --resend-failed: references whose payout failed after creation and whose refund is
   * journalled. Such a row gets a `resend` line, then a new attempt (never while the payout is in
   * progress or paid, nor before its refund: the fold refuses the line otherwise).
   */
  resend?: Set<string>;
}

/** A row created by an earlier run whose payout still lacks documents (documentsToAttach). */
export interface FinishItem {
  rowNumber: number;
  reference: string;
}

export interface ExecuteResult {
  outcomes: Map<number, RowOutcome>;
  /** The run stopped early: the service is unreachable or refused the key (exit 4). */
  halted?: string;
  /** The user asked to stop. */
  stopped: boolean;
}

/** The initiate body of a row. Field order is fixed, so the same row always gives the same text. */
export function initiateBody(p: PayoutRow, supportingDocument?: string): InitiateRequest {
  const body: InitiateRequest = {
    sourceAmount: toApi(p.sourceAmount),
    sourceCurrency: p.sourceCurrency,
    destinationCurrency: p.destinationCurrency,
    destinationCountryCode: p.destinationCountryCode,
    method: p.method,
    beneficiary: p.beneficiary,
    narration: p.narration,
  };
  if (supportingDocument) body.supportingDocument = supportingDocument;
  if (p.remitterAddress) body.remitterAddress = p.remitterAddress;
  return body;
}

/** A step of a row that failed here, before any request: recorded on the row with its code. */
export class RowStepError extends Error {
  override readonly name = 'RowStepError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function errorSnapshot(e: unknown): ErrorSnapshot {
  if (e instanceof RowStepError) return { code: e.code, message: e.message };
  if (e instanceof PayoutApiError) {
    const fields = e.fieldErrors.length
      ? ` (${e.fieldErrors
          .slice(0, 3)
          .map((f) => `${f.field}: ${f.message}`)
          .join('; ')})`
      : '';
    return {
      status: e.status,
      code: e.code ?? (e.status ? `HTTP_${e.status}` : e.kind.toUpperCase().replace(/-/g, '_')),
      message: e.message + fields,
      requestId: e.requestId,
    };
  }
  return { code: 'LOCAL_ERROR', message: e instanceof Error ? e.message : String(e) };
}

/**
 * Failures that are not the row's fault and say the service cannot be used now: the key refused
 * (401/403), the quota or rate limit outlasting the retries (429), the service unreachable or
 * failing (network, timeout, 5xx after retries). The run stops; resuming is safe.
 */
export function isServiceTrouble(e: unknown): boolean {
  if (!(e instanceof PayoutApiError)) return false;
  if (e.status === 401 || e.status === 403 || e.status === 429) return true;
  if (e.status !== undefined && e.status >= 500) return true;
  return e.kind === 'network' || e.kind === 'timeout' || e.kind === 'aborted';
}

const isConflict = (e: unknown) => e instanceof PayoutApiError && e.status === 409;

class Halt extends Error {}

/** Merges PDFs and images (one page each) into one PDF, for --merge-documents. */
export async function mergeToPdf(files: { bytes: Uint8Array; contentType: DocumentContentType }[]): Promise<Uint8Array> {
  const out = await PDFDocument.create();
  for (const f of files) {
    if (f.contentType === 'application/pdf') {
      const src = await PDFDocument.load(f.bytes, { ignoreEncryption: true });
      for (const page of await out.copyPages(src, src.getPageIndices())) out.addPage(page);
    } else {
      const img = f.contentType === 'image/png' ? await out.embedPng(f.bytes) : await out.embedJpg(f.bytes);
      const page = out.addPage([img.width, img.height]);
      page.drawImage(img, { x: 0, y: 0, width: img.width, height: img.height });
    }
  }
  // Fixed dates: the same files merge into the same bytes.
  out.setCreationDate(new Date(0));
  out.setModificationDate(new Date(0));
  return out.save();
}

export async function executeRows(items: WorkItem[], o: ExecuteOptions): Promise<ExecuteResult> {
  const now = o.now ?? (() => new Date());
  const outcomes = new Map<number, RowOutcome>();
  let halted: string | undefined;
  const journal = (e: RowEvent, sync = false) => {
    o.writer.append(e, { sync });
    applyEvent(o.folded, e);
  };
  const at = () => now().toISOString();
  const emitDone = (item: WorkItem, out: RowOutcome) => {
    outcomes.set(item.rowNumber, out);
    o.onEvent?.({
      type: 'row-done',
      rowNumber: item.rowNumber,
      reference: item.payout.reference,
      status: out.status,
      key: out.key,
      requestId: out.requestId ?? out.error?.requestId,
      payoutId: out.payout?.id,
      errorCode: out.error?.code,
      message: out.error?.message,
    });
  };
  const halt = (e: unknown) => {
    halted ??= errorSnapshot(e).message;
    o.onEvent?.({ type: 'halted', reason: halted });
    throw new Halt(halted);
  };
  const attachPending = documentFinisher({
    client: o.client,
    journal: (e) => journal(e),
    at,
    failure: (e) => {
      if (isServiceTrouble(e)) halt(e);
      return errorSnapshot(e);
    },
  });

  /** Sends (or resends) one initiate and journals the answer. Returns the new state. */
  async function initiate(item: WorkItem, key: string, body: string, attempt: number, fresh: boolean): Promise<RowState> {
    const ref = item.payout.reference;
    if (fresh) {
      const write = () => journal({ t: 'initiating', ref, row: item.rowNumber, attempt, key, body, at: at() }, true);
      if (!o.guard) write();
      else {
        try {
          await o.guard(ref, write);
        } catch (e) {
          halt(e); // the reservation is gone: nothing more is sent (resume is safe)
        }
      }
    }
    try {
      const r = await o.client.initiate(body, { idempotencyKey: key });
      const payout = snapshotOf(await completeCreated(o.client, r.payout), sentPayout(body));
      journal({ t: 'created', ref, attempt, key, requestId: r.requestId, payout, at: at() }, true);
    } catch (e) {
      if (!(e instanceof PayoutApiError)) throw e;
      if (e.outcome === 'unknown') {
        journal({ t: 'unknown', ref, attempt, key, error: errorSnapshot(e), at: at() }, true);
        if (e.kind === 'network' || e.kind === 'timeout') halt(e);
      } else if (isConflict(e)) {
        journal({ t: 'conflict', ref, attempt, key, error: errorSnapshot(e), at: at() }, true);
      } else if (isServiceTrouble(e)) {
        // The service did not act; the row stays 'initiating' and is resent with the same key and body.
        halt(e);
      } else {
        journal({ t: 'rejected', ref, attempt, key, error: errorSnapshot(e), at: at() }, true);
      }
    }
    return rowState(o.folded, ref);
  }

  async function uploadDocuments(item: WorkItem): Promise<string[]> {
    const p = item.payout;
    const ref = p.reference;
    if (!p.documents.length) return [];
    const known = rowState(o.folded, ref).docs;
    const load = async (path: string) => {
      // The file validated, not whatever is at its path now (a FIFO there would never end a read).
      const f = await readDocumentForUpload(path, o.documents?.get(path));
      if (!f.ok) throw new RowStepError(f.code, f.message);
      return { bytes: f.bytes, contentType: f.contentType, filename: basename(path) };
    };
    const upload = async (name: string, file: () => Promise<{ bytes: Uint8Array; contentType: DocumentContentType; filename: string }>) => {
      const have = known[name];
      if (have) return have;
      const f = await file();
      const r = await o.client.uploadDocument(f);
      journal({ t: 'doc', ref, doc: name, url: r.documentUrl });
      return r.documentUrl;
    };
    if (o.mergeDocuments && p.documents.length > 1) {
      const name = `merged:${p.documents.join('|')}`;
      const url = await upload(name, async () => {
        const files = await Promise.all(p.documents.map(load));
        return {
          bytes: await mergeToPdf(files),
          contentType: 'application/pdf',
          filename: `${ref.replace(/[^A-Za-z0-9._-]/g, '_')}-documents.pdf`,
        };
      });
      return [url];
    }
    const urls: string[] = [];
    for (const path of p.documents) urls.push(await upload(path, () => load(path)));
    return urls;
  }

  async function processRow(item: WorkItem): Promise<void> {
    const p = item.payout;
    const ref = p.reference;
    let s = rowState(o.folded, ref);
    const finish = () => emitDone(item, outcomeFromState(rowState(o.folded, ref), { status: ENGINE_STATUSES.NOT_SENT, documents: [] }));

    if (s.phase === 'created' && o.resend?.has(ref)) {
      journal({ t: 'resend', ref, payoutId: s.payout!.id, at: at() }, true);
      s = rowState(o.folded, ref);
    }
    if (s.phase === 'created') {
      await attachPending(s, false);
      return finish();
    }
    if (s.phase === 'conflict') return finish();
    if (s.phase === 'initiating' || s.phase === 'unknown') {
      // I2: settle with the journalled key and the exact journalled text, never a new key.
      o.onEvent?.({ type: 'row-start', rowNumber: item.rowNumber, reference: ref, attempt: s.attempt, settling: true });
      s = await initiate(item, s.key!, s.body!, s.attempt, false);
      if (s.phase === 'created') {
        // (no PATCH of this payout was ever sent: its outcome was unknown until now)
        await attachPending(s, true);
        return finish();
      }
      if (s.phase !== 'rejected' || o.mode === 'run') return finish();
    }
    if (s.phase === 'rejected' && o.mode === 'run') return finish();

    // A new attempt (I3: after a definitive refusal the key changes with the attempt).
    const attempt = s.attempt + 1;
    const key = idempotencyKey(o.batchId, ref, attempt);
    o.onEvent?.({ type: 'row-start', rowNumber: item.rowNumber, reference: ref, attempt, settling: false });
    const refuse = (e: unknown) => {
      if (isServiceTrouble(e)) halt(e);
      journal({ t: 'rejected', ref, attempt, key, error: errorSnapshot(e), at: at() }, true);
    };
    if (o.quote) {
      try {
        const q = await o.client.quote({
          sourceAmount: toApi(p.sourceAmount),
          sourceCurrency: p.sourceCurrency,
          destinationCurrency: p.destinationCurrency,
          destinationCountryCode: p.destinationCountryCode,
          method: p.method,
        });
        journal({
          t: 'quote',
          ref,
          attempt,
          rate: q.exchangeRate,
          fee: q.fee?.amount,
          totalDeductible: q.totalDeductible,
          destinationAmount: q.destinationAmount,
        });
      } catch (e) {
        refuse(e);
        return finish();
      }
    }
    let urls: string[];
    try {
      urls = await uploadDocuments(item);
    } catch (e) {
      refuse(e);
      return finish();
    }
    // What the payout is to get by PATCH once created: if this run stops first, the next one does it.
    if (urls.length) journal({ t: 'attach', ref, attempt, documents: urls.slice(1), at: at() });
    const body = JSON.stringify(initiateBody(p, urls[0]));
    s = await initiate(item, key, body, attempt, true);
    if (s.phase === 'created') await attachPending(s, true);
    return finish();
  }

  const limit = pLimit(Math.max(1, o.concurrency ?? 8));
  const checkpoints = o.checkpoint ? startCheckpoints(o.checkpoint, { everyMs: o.checkpointMs ?? 3000 }) : undefined;
  const runAll = async (list: WorkItem[]) => {
    await Promise.all(
      list.map((item) =>
        limit(async () => {
          if (halted || o.stop?.aborted) return;
          try {
            await processRow(item);
          } catch (e) {
            if (e instanceof Halt) {
              emitDone(
                item,
                outcomeFromState(rowState(o.folded, item.payout.reference), {
                  status: ENGINE_STATUSES.NOT_SENT,
                  documents: [],
                  error: { code: 'SERVICE_UNAVAILABLE', message: `not sent: ${e.message}` },
                }),
              );
              return;
            }
            throw e;
          }
        }),
      ),
    );
  };
  // Created rows of earlier runs whose documents are not all attached, after the rows to send.
  const finishAll = (list: FinishItem[]) =>
    Promise.all(
      list.map((f) =>
        limit(async () => {
          if (halted || o.stop?.aborted) return;
          try {
            await attachPending(rowState(o.folded, f.reference), false);
          } catch (e) {
            if (!(e instanceof Halt)) throw e;
          }
        }),
      ),
    );
  try {
    await Promise.all([runAll(items), finishAll(o.finish ?? [])]);
    // Rows whose outcome is still unknown: resend the same key and body again before giving up.
    for (let pass = 0; pass < (o.settlePasses ?? 2) && !halted && !o.stop?.aborted; pass++) {
      const unknown = items.filter((i) => outcomes.get(i.rowNumber)?.status === ENGINE_STATUSES.UNKNOWN_OUTCOME);
      if (!unknown.length) break;
      o.onEvent?.({ type: 'settle-pass', rows: unknown.length });
      await new Promise((r) => setTimeout(r, o.settleDelayMs ?? 1000));
      await runAll(unknown);
    }
  } finally {
    await checkpoints?.stop();
  }
  return { outcomes, halted, stopped: !!o.stop?.aborted };
}

export { isCreatedStatus };
