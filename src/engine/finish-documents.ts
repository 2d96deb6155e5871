// Later runs finish what a created row still needs: its extra documents (issue 15).
//
// A row's first document goes on initiate, the others by PATCH documents once the payout exists
// (spec §4.2, §4.5). A run stopped between the two (kill -9, a halt), or a PATCH that failed,
// leaves a payout with fewer documents than its row names. The journal says which are missing
// (the `attach` line before initiate, documentsToAttach in journal/lines.ts) until a `patched`
// line, and the results file says DOCUMENTS_NOT_ATTACHED meanwhile. Every run and retry hands such
// created rows to the work loop, which attaches them:
//   - right after this run created the payout: it holds the initiate's document, PATCH the rest;
//   - on a later run: GET the payout first and send only the URLs it does not hold yet, so that a
//     PATCH that landed before the run stopped is not sent again, and the payout never holds more
//     than 5 in all (spec §8); nothing is sent to a payout in a final status (spec §3: documents
//     only while PENDING, ADDITIONAL_INFO_REQUIRED or PROCESSING).
// The service also drops a URL it holds (spec §4.5): a PATCH resent after an unknown outcome adds
// nothing twice.
import type { PayoutClient } from '../client/client.ts';
import { documentsToAttach, type ErrorSnapshot, type RowEvent, type RowState } from '../journal/lines.ts';
import { FINAL_STATUSES, MAX_DOCUMENTS_PER_PAYOUT } from '../spec/codes.ts';

const FINAL: ReadonlySet<string> = new Set(FINAL_STATUSES);

/** What a read of the payout tells about its documents (spec §2: supportingDocuments). */
interface PayoutRead {
  status: string;
  statusDetail?: string | null;
  updatedAt?: string | null;
  supportingDocuments?: readonly { url?: string | null }[] | null;
}

export interface DocumentFinisherOptions {
  client: PayoutClient;
  /** Appends a line to the batch's journal (and to its fold). */
  journal: (e: RowEvent) => void;
  at: () => string;
  /**
   * A failed request as recorded on the row; throws instead when the failure stops the run (the
   * key refused, the service unreachable: PayoutApiError.serviceTrouble).
   */
  failure: (e: unknown) => ErrorSnapshot;
}

const finalMessage = (status: string) =>
  `the payout is ${status}: documents can be added only while it is PENDING, ADDITIONAL_INFO_REQUIRED or PROCESSING (spec §3)`;

/**
 * Attaches what a created row's payout still lacks. `fresh`: this run learnt of the payout just now
 * and sent it no PATCH yet, so it holds only the initiate's document (read from the payout when the
 * journal predates `attach` lines, whose list holds that one too).
 */
export function documentFinisher(o: DocumentFinisherOptions): (s: RowState, fresh: boolean) => Promise<void> {
  return async (s, fresh) => {
    const want = documentsToAttach(s);
    const p = s.payout;
    if (!want.length || !p) return;
    const ref = s.ref;
    const failed = (error: ErrorSnapshot) => o.journal({ t: 'patch-failed', ref, payoutId: p.id, error, at: o.at() });
    if (FINAL.has(p.status)) {
      if (!s.patchError) failed({ code: 'INVALID_PAYOUT_STATUS', message: finalMessage(p.status) });
      return;
    }
    let missing = want;
    let held = p.documents;
    if (!fresh || !s.attach) {
      let read: PayoutRead;
      try {
        read = await o.client.getPayout(p.id);
      } catch (e) {
        return failed(o.failure(e));
      }
      if (read.status !== p.status) {
        o.journal({
          t: 'status',
          ref,
          payoutId: p.id,
          status: read.status,
          ...(read.statusDetail ? { statusDetail: read.statusDetail } : {}),
          ...(read.updatedAt ? { changedAt: read.updatedAt } : {}),
          source: 'get',
          at: o.at(),
        });
      }
      const urls = new Set((read.supportingDocuments ?? []).flatMap((d) => (d.url ? [d.url] : [])));
      held = urls.size;
      missing = want.filter((u) => !urls.has(u));
      if (!missing.length) {
        o.journal({ t: 'patched', ref, payoutId: p.id, documents: [], at: o.at() });
        return;
      }
      if (FINAL.has(read.status)) return failed({ code: 'INVALID_PAYOUT_STATUS', message: finalMessage(read.status) });
    }
    if (held + missing.length > MAX_DOCUMENTS_PER_PAYOUT) {
      return failed({
        code: 'MAX_DOCUMENTS_EXCEEDED',
        message: `the payout holds ${held} documents; ${missing.length} more would pass the ${MAX_DOCUMENTS_PER_PAYOUT} a payout takes (spec §8)`,
      });
    }
    try {
      await o.client.patchDocuments(p.id, missing);
    } catch (e) {
      return failed(o.failure(e));
    }
    o.journal({ t: 'patched', ref, payoutId: p.id, documents: missing, at: o.at() });
  };
}
