// `listen` (spec §6): verify, drop replays, record (fsynced) and only then answer 200, so a delivery
// is durable before the service is told it arrived; then apply in arrival order, the deliveries
// waiting meanwhile together: each results file read and written once for them all.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReadStream, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PayoutClient } from '../client/client.ts';
import { verifyWebhook, WebhookVerificationError } from '../client/verify-webhook.ts';
import { JournalWriter, scanJournal, type JournalEvent } from '../journal/journal.ts';
import { WebhookEvent, type WalletEvent } from '../client/answers.ts';
import { applyStatus, type ApplyOptions, type StatusTarget, type StatusUpdate } from './apply-status.ts';
import { acquireLock } from '../files/lock.ts';
import { unlessMissing } from '../files/attempt.ts';
import { canonicalJson } from '../text.ts';

export const MAX_DELIVERY_BYTES = 1024 * 1024;
/** Keys of recorded deliveries held in memory; a replay of an older one is recorded again (applying is forward only). */
const SEEN_MAX = 200_000;

/** `stateRoots`, `shared`: where the journals are searched (apply-status.ts). */
interface ListenerOptions extends Pick<ApplyOptions, 'stateRoots' | 'shared' | 'logger'> {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  secret: string;
  /** Holds inbox.jsonl and listen.lock. */
  stateDir: string;
  results?: string[];
  /** Watch folders: the results files under done/, failed/ and processing/; their journals in `state` (src/watch/inbox.ts layout). */
  watchDirs?: { dir: string; state: string }[];
}

type ListenerStats = Record<'accepted' | 'duplicates' | 'rejected' | 'applied', number>;

export type RunningListener = Awaited<ReturnType<typeof startListener>>;

interface DeliveryLine extends JournalEvent {
  t: 'delivery';
  deliveryId: string;
  eventType: string;
  receivedAt: string;
  /** The body exactly as received. */
  raw: string;
  eventKey: string;
}

/** An event's type and `data`, not its delivery id nor occurredAt: a replay may bear new ones. */
function eventKey(event: { eventType: string; data: unknown }): string {
  return createHash('sha256')
    .update(`${event.eventType}\n${canonicalJson(event.data)}`)
    .digest('base64url')
    .slice(0, 32);
}

/** Found afresh for each event (a watch adds files). */
function targetFiles(o: Pick<ListenerOptions, 'results' | 'watchDirs'>): StatusTarget[] {
  const out: StatusTarget[] = (o.results ?? []).map((f) => ({ file: resolve(f) }));
  for (const { dir, state } of o.watchDirs ?? []) {
    for (const sub of ['done', 'failed', 'processing']) {
      const base = join(resolve(dir), sub);
      for (const claim of unlessMissing(() => readdirSync(base)) ?? []) {
        // (a file there is no claim: ENOTDIR; moved meanwhile: ENOENT; one that cannot be listed: the deliveries wait)
        const unlistable = (code: string) => new Error(`cannot list ${join(base, claim)} (${code}): make it listable by listen's user`);
        const entries =
          unlessMissing(() => readdirSync(join(base, claim), { withFileTypes: true }), unlistable, ['ENOENT', 'ENOTDIR']) ?? [];
        // regular files only: a link is never written through
        for (const e of entries)
          if (e.isFile() && !e.name.startsWith('.') && /\.results(\.retry-\d+)?\.(csv|tsv|txt|xlsx)$/i.test(e.name))
            out.push({ file: join(base, claim, e.name), stateDirs: [state] });
      }
    }
  }
  return out;
}

/**
 * A CSV that contains none of the ids cannot hold their rows: skip parsing it (UTF-16 text, Excel's
 * "Unicode Text", holds NULs). Read a piece at a time, each searched with the end of the one before.
 */
async function mayHold(file: string, payoutIds: string[]): Promise<boolean> {
  if (/\.xlsx$/i.test(file)) return true;
  const longest = payoutIds.reduce((n, id) => Math.max(n, id.length), 0);
  let tail = '';
  try {
    for await (const piece of createReadStream(file, { encoding: 'utf8' })) {
      const text = tail + (piece as string);
      if (text.includes('\0') || payoutIds.some((id) => text.includes(id))) return true;
      tail = text.slice(text.length - longest);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // (gone meanwhile: none)
  }
  return false;
}

type InboxLine = DeliveryLine | (JournalEvent & { t: 'applied'; deliveryId: string });

/** Takes the state folder's lock and recovers the inbox; then each delivery is received, accepted, applied. */
export async function startListener(o: ListenerOptions) {
  if (!o.secret) throw new RangeError('a webhook secret is required: unsigned deliveries are never applied');
  const stateDir = resolve(o.stateDir);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const lock = await acquireLock(join(stateDir, 'listen.lock'), { staleMs: 60_000, purpose: 'listen' });
  const log = o.logger;
  const counts: ListenerStats = { accepted: 0, duplicates: 0, rejected: 0, applied: 0 };
  /** "id:…" and "event:…" keys recorded: the newest SEEN_MAX, in insertion order. */
  const seen = new Set<string>();
  let chain: Promise<void> = Promise.resolve();
  /** Accepted, waiting for the chain: applied together. */
  const waiting: DeliveryLine[] = [];
  let closed = false;

  const remember = (d: DeliveryLine): void => {
    for (const k of [`id:${d.deliveryId}`, `event:${d.eventKey}`]) {
      seen.delete(k);
      seen.add(k);
    }
    while (seen.size > SEEN_MAX) seen.delete(seen.values().next().value!);
  };

  const inboxPath = join(stateDir, 'inbox.jsonl');
  /** Recorded, not applied yet (its `applied` line comes after it), in order; the inbox is read, never held. */
  const unapplied = new Map<string, DeliveryLine>();
  let inbox: JournalWriter;
  try {
    scanJournal<InboxLine>(inboxPath, (e) => {
      if (e.t === 'applied') unapplied.delete(e.deliveryId);
      else if (e.t === 'delivery') {
        unapplied.set(e.deliveryId, e);
        remember(e);
      }
    });
    inbox = JournalWriter.open(inboxPath);
  } catch (e) {
    lock.release(); // (a start that fails lets the state folder go)
    throw e;
  }
  /** Why listen.lock is no longer this listener's: nothing more is taken or applied. */
  let lost: string | undefined;
  let onLost: (why: string) => void = () => {};
  const lockLost = new Promise<string>((ok) => (onLost = ok));
  const heartbeat = setInterval(() => {
    lost = lock.touch();
    if (!lost) return;
    clearInterval(heartbeat);
    log?.error(
      { stateDir, why: lost },
      'listen.lock lost: deliveries are refused (503: the service sends them again) and this listener stops. ' +
        'Make sure no other listen uses this state folder, then start it again: what it accepted and did not apply is applied then',
    );
    onLost(lost);
  }, 10_000);
  heartbeat.unref();

  const enqueue = (d: DeliveryLine): void => {
    // (more than one waiting: the chain's next step, not started yet, takes this one too)
    if (waiting.push(d) > 1) return;
    chain = chain.then(async () => {
      const ds = waiting.splice(0);
      await applyAll(ds).catch((e: unknown) => {
        for (const { deliveryId } of ds)
          log?.error({ deliveryId, err: (e as Error).message }, 'delivery not applied: it is applied again on the next start');
      });
    });
  };

  /** In arrival order: the wallet events logged, the status changes applied together. */
  async function applyAll(ds: DeliveryLine[]): Promise<void> {
    if (lost) return; // (left unapplied in the inbox)
    const updates: StatusUpdate[] = [];
    for (const d of ds) {
      // (as verified: a status in other letters, an id as a number; a line an older version recorded, as it is)
      const raw: unknown = JSON.parse(d.raw);
      const event = WebhookEvent.safeParse(raw).data ?? (raw as WebhookEvent);
      if (event.eventType === 'payout.status.changed' || event.eventType === 'payout.status.changed.v1') {
        const { payoutId, newStatus: status, newStatusDetail: statusDetail, informationRequests, changedAt: at, reason } = event.data;
        updates.push({ payoutId, status, statusDetail, informationRequests, at, source: 'webhook', deliveryId: d.deliveryId, reason });
      } else {
        const { eventType, data } = event as WalletEvent;
        const { transactionType, amount, currency, reference, transactionId } = data;
        const fields = { deliveryId: d.deliveryId, eventType, transactionType, amount, currency, reference, transactionId };
        log?.info(fields, eventType === 'wallet.credited' ? 'wallet credited' : 'wallet debited');
      }
    }
    const targets = targetFiles(o);
    const ids = updates.map((u) => u.payoutId);
    // (one that cannot be read is said and left: the others and the journals get the changes, `status` mends it later)
    const held = await Promise.all(
      targets.map((t) =>
        mayHold(t.file, ids).catch((e: NodeJS.ErrnoException) => {
          log?.warn(
            { file: t.file, code: e.code ?? e.message },
            `results file not brought up to date: once it can be read, run payout-batch status ${t.file}`,
          );
          return false;
        }),
      ),
    );
    const { applied } = await applyStatus(
      targets.filter((_, i) => held[i]),
      updates,
      // a payout no file holds: its journal is searched in every watch folder's state too
      { stateDirs: (o.watchDirs ?? []).map((w) => w.state), stateRoots: o.stateRoots, shared: o.shared, logger: log },
    );
    await o.shared?.flush(); // (a team ledger lost: not recorded as applied, so applied again on the next start)
    const rows = new Map<string, number>();
    for (const c of applied) rows.set(c.deliveryId!, (rows.get(c.deliveryId!) ?? 0) + 1);
    for (const { deliveryId } of ds) {
      inbox.append({ t: 'applied', deliveryId, rows: rows.get(deliveryId) ?? 0, at: new Date().toISOString() });
      counts.applied++;
    }
  }

  // accepted before a restart but never applied: first, in order
  for (const d of unapplied.values()) enqueue(d);

  function accept(req: IncomingMessage, raw: Buffer, res: ServerResponse): void {
    if (lost) return answer(res, 503, { error: 'not taken: this listener lost its state folder' });
    let verified: ReturnType<typeof verifyWebhook>;
    try {
      verified = verifyWebhook({ rawBody: raw, headers: req.headers, secret: o.secret });
    } catch (e) {
      if (!(e instanceof WebhookVerificationError)) throw e;
      counts.rejected++;
      const deliveryId = req.headers['x-service-delivery-id'];
      log?.warn({ reason: e.reason, deliveryId, remote: req.socket.remoteAddress }, 'delivery refused, nothing applied');
      return answer(res, e.reason === 'not-json' || e.reason === 'invalid-event' ? 400 : 401, { error: e.reason });
    }
    const id = verified.deliveryId;
    // all of the body's data, not only the fields the spec names
    const key = eventKey(JSON.parse(raw.toString('utf8')) as WebhookEvent);
    if (seen.has(`id:${id}`) || seen.has(`event:${key}`)) {
      counts.duplicates++;
      log?.info(
        { deliveryId: id, eventType: verified.event.eventType, eventKey: key, sameDeliveryId: seen.has(`id:${id}`) },
        'replayed delivery dropped',
      );
      return answer(res, 200, { received: true, duplicate: true });
    }
    const line: DeliveryLine = {
      t: 'delivery',
      deliveryId: id,
      eventType: verified.event.eventType,
      receivedAt: new Date().toISOString(),
      eventKey: key,
      raw: raw.toString('utf8'),
    };
    try {
      inbox.append(line, { sync: true });
    } catch (e) {
      log?.error({ deliveryId: id, err: (e as Error).message }, 'delivery not recorded: answered 503 so the service sends it again');
      return answer(res, 503, { error: 'not recorded' });
    }
    remember(line);
    counts.accepted++;
    answer(res, 200, { received: true });
    if (!closed) enqueue(line);
  }

  function receive(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'POST') return answer(res, 405, { error: 'POST a webhook delivery' });
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_DELIVERY_BYTES) tooBig = true;
      else chunks.push(c);
    });
    req.on('end', () => {
      if (tooBig) return answer(res, 413, { error: 'body over 1 MB' });
      accept(req, Buffer.concat(chunks), res);
    });
    req.on('error', () => answer(res, 400, { error: 'bad request' }));
  }

  const server = createServer((req, res) => {
    try {
      receive(req, res);
    } catch (e) {
      log?.error({ err: (e as Error).message }, 'listener error');
      if (!res.headersSent) answer(res, 500, { error: 'internal' });
    }
  });
  const release = (): void => {
    clearInterval(heartbeat);
    inbox.close();
    lock.release();
  };

  const host = o.host ?? '127.0.0.1';
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(o.port, host, () => ok());
    });
  } catch (e) {
    release();
    throw e;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  log?.info({ url, stateDir, results: o.results ?? [], watchDirs: (o.watchDirs ?? []).map((w) => w.dir) }, 'listening');

  return {
    url,
    port,
    stats: (): ListenerStats => ({ ...counts }),
    /** Resolves, saying why, when listen.lock is no longer this listener's (gone, another's, not marked). */
    lockLost,
    /** Resolves when every accepted delivery has been applied. */
    async idle(): Promise<void> {
      let last: Promise<void>;
      do {
        last = chain;
        await last;
      } while (last !== chain);
    },
    /** The deliveries accepted are applied before the state folder is let go. */
    async close(): Promise<void> {
      closed = true;
      await new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections?.();
      });
      await chain;
      release();
    },
  };
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** `--register URL`: creates the business's one subscription, or points the existing one here. */
export async function registerSubscription(client: PayoutClient, url: string, secret: string) {
  // the stored record's fields are "not shown" (spec §4.13)
  const existing = (await client.listWebhooks()).data[0];
  const s = existing ? await client.updateWebhook(existing.id, { url, secret }) : await client.registerWebhook({ url, secret });
  return { action: existing ? 'updated' : 'created', id: s.id, url: s.url ?? url };
}
