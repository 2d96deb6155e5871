// What retry-fuzz.ts and run-fuzz.ts judge by: the sandbox's own records (each payout, and the key and body
// that created it), a row of a file given matching a body, and the payouts of each reference.
import { createHash } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { idempotencyKey } from '../../src/engine/identity.ts';
import { readFlags } from '../bench/args.ts';
import { Dec } from '../../src/money.ts';
import { canonicalJson } from '../../src/text.ts';
import { PDFDocument } from 'pdf-lib';
import type { LocalSandbox } from '../../src/sandbox/start-sandbox.ts';

/** The sandbox's records: each payout's status and amounts, and the key and body that created it. */
export function serviceRecords(sb: LocalSandbox) {
  const s = sb.snapshot();
  const byRecord = new Map<string, { key: string; body: Record<string, unknown> }>();
  for (const e of s.idempotency) {
    if (!e.recordId) continue;
    const [, key] = e.slot.split('\u0000');
    const [route, json] = e.fingerprint.split('\u0000');
    if (route === 'initiate') byRecord.set(e.recordId, { key: key!, body: JSON.parse(json!) as Record<string, unknown> });
  }
  return s.payouts.map((p) => ({ id: String(p.id), status: String(p.status), made: byRecord.get(String(p.id)) }));
}

/** The sha256 of the bytes of each document the service attached to each payout (initiate or PATCH), by payout id, from its storage. */
export function attachedDigests(sb: LocalSandbox): Map<string, string[]> {
  const s = sb.snapshot();
  const bytes = new Map(s.documents.flatMap((d) => (d.uploaded ? [[String(d.documentToken), d.uploaded.base64] as const] : [])));
  const digest = (url: string) => {
    const token = new URL(url).pathname.split('/')[3] ?? '';
    const b64 = bytes.get(token);
    return b64 === undefined ? `(no bytes stored for ${url})` : createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex');
  };
  return new Map(s.payouts.map((p) => [String(p.id), ((p.documents ?? []) as { url: string }[]).map((d) => digest(d.url))]));
}

/** Each key and body the journals hold an `initiating` of (the tool's records: only to excuse a resend after a kill, never to judge). */
export async function journalledSends(state: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const f of await readdir(join(state, 'ledgers'), { recursive: true }).catch(() => []))
    if (f.endsWith('.journal.jsonl'))
      for (const l of (await readFile(join(state, 'ledgers', f), 'utf8')).split('\n')) {
        const e = parseJson(l);
        if (e?.t === 'initiating' && typeof e.body === 'string') out.add(`${String(e.key)}\u0000${canonicalJson(JSON.parse(e.body))}`);
      }
  return out;
}

/** What a scenario threw, as a violation of check `check` (its letter in the campaign's list). */
export const threw = (check: string, e: unknown): string =>
  `(${check}) the scenario threw: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`;

/** A scenario's folder at its end: removed, or kept and named (`--keep`). */
export async function leave(dir: string, keep: boolean): Promise<void> {
  if (keep) console.log(`kept ${dir}`);
  else await rm(dir, { recursive: true, force: true });
}

export const parseJson = (s: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(s) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

/** A row (its cells) whose payee, amount and currencies are the body's. */
export function matches(cells: Record<string, string | undefined>, body: Record<string, unknown>): boolean {
  const c = (f: string) => (cells[f] ?? '').trim();
  const b = body.beneficiary as Record<string, unknown>;
  let amount: Dec;
  try {
    // (as the reader takes "1,234.56")
    amount = new Dec(
      c('sourceAmount').replace(/^(\d{1,3}(,\d{3})+)(\.\d+)?$/, (_m, i: string, _g, f?: string) => i.replaceAll(',', '') + (f ?? '')),
    );
  } catch {
    return false;
  }
  return (
    amount.eq(String(body.sourceAmount)) &&
    c('sourceCurrency') === body.sourceCurrency &&
    c('destinationCurrency') === body.destinationCurrency &&
    Object.entries(b).every(([f, v]) => c(f) === String(v))
  );
}

/**
 * Payouts per reference (by the key that created each; `fold`: case aside too): more than one only after FAILED or
 * REJECTED ones when `resendAsked` (--resend-failed). The fuzz's own drains (keys fuzz-drain-*) are not the batch's.
 */
export function twicePaid(
  payouts: ReturnType<typeof serviceRecords>,
  refs: Set<string>,
  o: { resendAsked?: boolean; fold?: boolean } = {},
): string[] {
  const norm = (ref: string) => (o.fold ? ref.toLowerCase() : ref);
  const refOfKey = new Map<string, string>();
  for (const ref of refs) for (let a = 1; a <= 8; a++) refOfKey.set(idempotencyKey(ref, a), ref);
  const byRef = new Map<string, typeof payouts>();
  const out: string[] = [];
  for (const p of payouts) {
    if (p.made?.key.startsWith('fuzz-drain-')) continue;
    const ref = p.made && refOfKey.get(p.made.key);
    if (!ref) {
      out.push(`payout ${p.id} under key ${p.made?.key} of no reference the files named`);
      continue;
    }
    byRef.set(norm(ref), [...(byRef.get(norm(ref)) ?? []), p]);
  }
  for (const [ref, ps] of byRef) {
    if (ps.length < 2) continue;
    const failed = ps.filter((p) => p.status === 'FAILED' || p.status === 'REJECTED').length;
    if (!o.resendAsked || failed < ps.length - 1)
      out.push(`${ref} has ${ps.length} payouts (${ps.map((p) => `${p.id} ${p.status} ${p.made?.key}`).join(', ')})`);
  }
  return out;
}

/** Each scenario (`only`: the one of that index; `given`: one replayed, numbered `only`), its story printed when it fails or `verbose`; the failures. */
export async function runScenarios<
  S,
  T extends Record<string, number>,
  R extends { violations: string[]; notes: string[] } & { [K in keyof T]?: number },
>(
  scenarios: S[],
  o: { only?: number; given: boolean; verbose: boolean },
  run: (sc: S, n: number) => Promise<R>,
  /** Each scenario's figures of these names are added to them. */
  totals: T,
): Promise<number> {
  let failures = 0;
  for (const [i, sc] of scenarios.entries()) {
    if (o.only !== undefined && !o.given && i !== o.only) continue;
    const n = o.given ? (o.only ?? i) : i;
    const r = await run(sc, n);
    for (const k of Object.keys(totals) as (keyof T)[]) (totals as Record<keyof T, number>)[k] += r[k] ?? 0;
    if (r.violations.length || o.verbose) {
      console.log(`\n#${n} ${JSON.stringify(sc)}`);
      for (const note of r.notes) console.log(`  ${note}`);
      for (const v of r.violations) console.log(`  VIOLATION ${v}`);
    }
    if (r.violations.length) failures++;
  }
  return failures;
}

/**
 * A campaign's flags: `--seed S --runs N --verbose`; `--only N`: scenario N of the seed alone (a replay); `--keep`: its
 * folder left in place; `--scenario JSON`: one scenario as a report printed it (its number after it: --only), run alone.
 */
export function fuzzFlags<S>(argv = process.argv.slice(2)) {
  const at = argv.indexOf('--scenario');
  const given = at >= 0 ? (JSON.parse(argv.splice(at, 2)[1]!) as S) : undefined;
  const flags = readFlags(argv, ['seed', 'runs', 'only'], ['verbose', 'keep']);
  return {
    given,
    seed: flags.num('seed') ?? Date.now() % 1_000_000,
    runs: flags.num('runs') ?? 20,
    verbose: flags.flag('verbose') ?? false,
    only: flags.num('only'),
    keep: flags.flag('keep') ?? false,
  };
}

/** The scope of the idempotency record that created each payout (by id): the business's id, or, keys per API key (the variant reading), the sha256 of the API key. */
export function creatorScopes(sb: LocalSandbox): Map<string, string> {
  return new Map(sb.snapshot().idempotency.flatMap((e) => (e.recordId ? [[e.recordId, e.slot.split('\u0000')[0]!] as const] : [])));
}

/** Whether two lists of rows hold the same cells (outer spaces and empty cells aside), in any order. */
export function sameCells(given: Record<string, string>[], written: Record<string, string>[]): boolean {
  const key = (x: Record<string, string>) =>
    JSON.stringify(
      Object.entries(x)
        .map(([c, v]) => [c, v.trim()])
        .filter(([, v]) => v)
        .sort(),
    );
  return JSON.stringify(given.map(key).sort()) === JSON.stringify(written.map(key).sort());
}

export type Drain = { walletId: string; amount: Dec };

/** Drains a GBP, EUR or NGN wallet to less than a row and its fee, by another payment of the business under `key`; what to credit back, or undefined. */
export async function drainWallet(
  sb: LocalSandbox,
  apiKey: string,
  currency: 'GBP' | 'EUR' | 'NGN',
  key: string,
): Promise<Drain | undefined> {
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const wallets = (await (await fetch(`${sb.url}/v1/payout-api/payouts/wallets`, { headers })).json()) as {
    data?: { walletId: string; currency: string; balance: number | string }[];
  };
  const w = (wallets.data ?? []).find((x) => x.currency === currency);
  if (!w) return undefined;
  const amount = new Dec(String(w.balance)).minus({ GBP: 7, EUR: 10, NGN: 105 }[currency]).floor();
  const body = {
    GBP: {
      method: 'FASTER_PAYMENTS',
      country: 'GBR',
      beneficiary: { iban: 'GB29NWBK60161331926819', accountNumber: '31926819', sortCode: '601613' },
    },
    EUR: { method: 'SEPA', country: 'DEU', beneficiary: { iban: 'DE89370400440532013000' } },
    NGN: { method: 'NIP', country: 'NGA', beneficiary: { accountNumber: '0123456785', bankCode: '058' } },
  }[currency];
  await fetch(`${sb.url}/v1/payout-api/payouts/initiate`, {
    method: 'POST',
    headers: { ...headers, 'idempotency-key': key },
    body: JSON.stringify({
      sourceAmount: amount.toNumber(),
      sourceCurrency: currency,
      destinationCurrency: currency,
      destinationCountryCode: body.country,
      method: body.method,
      beneficiary: { accountName: 'Other Payment Ltd', accountCurrency: currency, ...body.beneficiary },
      narration: 'another payment of the business',
    }),
    // (an answer a scenario's faults lose: the drain was made or not; the credit back is made either way)
  }).catch(() => undefined);
  return { walletId: w.walletId, amount };
}

/** Credits a drain back through the sandbox's control route. */
export async function creditBack(sb: LocalSandbox, d: Drain | undefined): Promise<void> {
  if (d)
    await fetch(`${sb.url}/_sandbox/wallets/${d.walletId}/credit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: d.amount.toFixed() }),
    });
}

/** The payouts of each reference (by the key that created each, attempts 1 to 8), and those under a key of none of them. */
export function payoutsByReference(payouts: ReturnType<typeof serviceRecords>, refs: Iterable<string>) {
  const refOfKey = new Map<string, string>();
  for (const ref of refs) for (let a = 1; a <= 8; a++) refOfKey.set(idempotencyKey(ref, a), ref);
  const byRef = new Map<string, typeof payouts>();
  const strays: typeof payouts = [];
  for (const p of payouts) {
    const ref = p.made && refOfKey.get(p.made.key);
    if (ref) byRef.set(ref, [...(byRef.get(ref) ?? []), p]);
    else strays.push(p);
  }
  return { byRef, strays };
}

/** A document a payout holds: the sha256 of the bytes the service's storage holds, and a PDF's page count. */
export type Held = { sha: string; pages?: number };

/** Each payout's documents at the service: the sha256 of the bytes its storage holds, and a PDF's page count. */
export async function heldDocuments(sb: LocalSandbox): Promise<Map<string, Held[]>> {
  const s = sb.snapshot();
  const bytes = new Map(
    s.documents.flatMap((d) => (d.uploaded ? [[d.documentToken, Buffer.from(d.uploaded.base64, 'base64')] as const] : [])),
  );
  const out = new Map<string, Held[]>();
  for (const p of s.payouts) {
    const docs: Held[] = [];
    for (const d of (p.documents ?? []) as { url: string }[]) {
      const b = bytes.get(new URL(d.url).pathname.split('/')[3] ?? '');
      docs.push(
        b
          ? { sha: createHash('sha256').update(b).digest('hex'), pages: b[0] === 0x25 ? await pagesOf(b) : undefined }
          : { sha: `(no bytes for ${d.url})` },
      );
    }
    out.set(String(p.id), docs);
  }
  return out;
}

/** The pages of a PDF (an image: 1), or undefined when it does not open. */
export async function pagesOf(b: Uint8Array): Promise<number | undefined> {
  if (b[0] === 0xff || b[0] === 0x89) return 1;
  try {
    return (await PDFDocument.load(b, { ignoreEncryption: true })).getPageCount();
  } catch {
    return undefined;
  }
}
