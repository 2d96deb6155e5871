// A created row's extra documents: the first goes on initiate, the others by PATCH (spec §4.2, §4.5). A later run GETs the
// payout first and sends only the URLs it lacks: never more than 5 (§8), none in a final status (§3); a resent PATCH adds nothing twice.
import type { PayoutClient } from '../client/client.ts';
import { documentsToAttach, type ErrorSnapshot, type RowEvent, type RowState } from '../journal/lines.ts';
import { isFinalStatus, MAX_DOCUMENTS_PER_PAYOUT } from '../spec/codes.ts';

interface DocumentFinisherOptions {
  client: PayoutClient;
  journal: (e: RowEvent) => void;
  at: () => string;
  /** A failed request as recorded on the row; throws when it stops the run (PayoutApiError.serviceTrouble). */
  failure: (e: unknown) => ErrorSnapshot;
}

const finalMessage = (status: string) =>
  `the payout is ${status}: documents can be added only while it is PENDING, ADDITIONAL_INFO_REQUIRED or PROCESSING (spec §3)`;

/** `fresh`: this run just created the payout and sent no PATCH, so it holds only the initiate's document. */
export function documentFinisher(o: DocumentFinisherOptions): (s: RowState, fresh: boolean) => Promise<void> {
  return async (s, fresh) => {
    const want = documentsToAttach(s);
    const p = s.payout;
    if (!want.length || !p) return;
    const ref = s.ref;
    const failed = (error: ErrorSnapshot) => o.journal({ t: 'patch-failed', ref, payoutId: p.id, error, at: o.at() });
    if (isFinalStatus(p.status)) {
      if (!s.patchError) failed({ code: 'INVALID_PAYOUT_STATUS', message: finalMessage(p.status) });
      return;
    }
    let missing = want;
    let held = p.documents;
    if (!fresh || !s.attach) {
      const read = await o.client.getPayout(p.id).catch((e: unknown) => failed(o.failure(e)));
      if (!read) return; // (failed: journalled)
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
      if (!missing.length) return o.journal({ t: 'patched', ref, payoutId: p.id, documents: [], at: o.at() });
      if (isFinalStatus(read.status)) return failed({ code: 'INVALID_PAYOUT_STATUS', message: finalMessage(read.status) });
    }
    if (held + missing.length > MAX_DOCUMENTS_PER_PAYOUT) {
      return failed({
        code: 'MAX_DOCUMENTS_EXCEEDED',
        message: `the payout holds ${held} documents; ${missing.length} more would pass the ${MAX_DOCUMENTS_PER_PAYOUT} a payout takes (spec §8)`,
      });
    }
    const patched = await o.client.patchDocuments(p.id, missing).catch((e: unknown) => failed(o.failure(e)));
    if (patched) o.journal({ t: 'patched', ref, payoutId: p.id, documents: missing, at: o.at() }); // (else failed: journalled)
  };
}
