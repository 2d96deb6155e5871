// `listen` (spec §6): verify, drop replays, record (fsynced) and only then answer 200, so a delivery
// is durable before the service is told it arrived; then apply, one at a time in arrival order.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { PayoutClient } from '../client/client.ts';
import { verifyWebhook, WebhookVerificationError } from '../client/verify-webhook.ts';
import { JournalWriter, readJournal, type JournalEvent } from '../journal/journal.ts';
import type { PayoutStatusChangedEvent, WalletEvent, WebhookEvent } from '../client/answers.ts';
import { applyStatus, type ApplyOptions, type StatusUpdate } from './apply-status.ts';
import { acquireLock, type HeldLock } from '../files/lock.ts';
import { canonicalJson } from '../text.ts';

export const MAX_DELIVERY_BYTES = 1024 * 1024;
/** Keys of recorded deliveries held in memory; a replay of an older one is recorded again (applying is forward only). */
const SEEN_MAX = 200_000;

interface ListenerOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  secret: string;
  /** Holds inbox.jsonl and listen.lock. */
  stateDir: string;
  /** State folders whose ledgers hold the journals (default the per-user one). */
  stateRoots?: string[];
  results?: string[];
  /** Watch folders: the results files under done/, failed/ and processing/. */
  watchDirs?: string[];
  logger?: Logger;
  /** The team ledger (--ledger): its journals are searched too. */
  shared?: ApplyOptions['shared'];
}

type ListenerStats = Record<'accepted' | 'duplicates' | 'rejected' | 'applied', number>;

export type RunningListener = Pick<WebhookListener, 'url' | 'port' | 'stats' | 'idle' | 'close'>;

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
function targetFiles(o: Pick<ListenerOptions, 'results' | 'watchDirs'>): { file: string; stateDirs?: string[] }[] {
  const out: { file: string; stateDirs?: string[] }[] = (o.results ?? []).map((f) => ({ file: resolve(f) }));
  for (const dir of o.watchDirs ?? []) {
    const stateDirs = watchStateDir(dir);
    for (const sub of ['done', 'failed', 'processing']) {
      const base = join(resolve(dir), sub);
      for (const claim of existsSync(base) ? readdirSync(base) : []) {
        let entries: Dirent[];
        try {
          entries = readdirSync(join(base, claim), { withFileTypes: true }); // (a file there is no claim: ENOTDIR)
        } catch {
          continue;
        }
        // regular files only: a link is never written through
        for (const e of entries)
          if (e.isFile() && !e.name.startsWith('.') && /\.results(\.retry-\d+)?\.(csv|tsv|txt|xlsx)$/i.test(e.name))
            out.push({ file: join(base, claim, e.name), stateDirs });
      }
    }
  }
  return out;
}

function watchStateDir(dir: string): string[] {
  try {
    const cfg = JSON.parse(readFileSync(join(resolve(dir), 'payout-batch.json'), 'utf8')) as { stateDir?: unknown };
    return typeof cfg.stateDir === 'string' && cfg.stateDir ? [resolve(dir, cfg.stateDir)] : [];
  } catch {
    return [];
  }
}

/** A CSV that does not contain the id cannot hold its row: skip parsing it. */
function mayHold(file: string, payoutId: string): boolean {
  if (/\.xlsx$/i.test(file)) return true;
  try {
    return readFileSync(file, 'utf8').includes(payoutId);
  } catch {
    return false;
  }
}

type InboxLine = DeliveryLine | (JournalEvent & { t: 'applied'; deliveryId: string });

/** `start` takes the state folder's lock and recovers the inbox; then `receive`, `accept`, `apply`. */
class WebhookListener {
  url = '';
  port = 0;
  private readonly log: Logger | undefined;
  private readonly inbox: JournalWriter;
  private readonly heartbeat: ReturnType<typeof setInterval>;
  private readonly server: Server;
  private readonly counts: ListenerStats = { accepted: 0, duplicates: 0, rejected: 0, applied: 0 };
  /** "id:…" and "event:…" keys recorded: the newest SEEN_MAX, in insertion order. */
  private readonly seen = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly o: ListenerOptions,
    private readonly stateDir: string,
    private readonly lock: HeldLock,
  ) {
    this.log = o.logger;
    this.heartbeat = setInterval(() => lock.touch(), 10_000);
    this.heartbeat.unref();
    const inboxPath = join(stateDir, 'inbox.jsonl');
    const unapplied = this.recover(readJournal<InboxLine>(inboxPath).events);
    this.inbox = JournalWriter.open(inboxPath);
    // accepted before a restart but never applied: first, in order
    for (const d of unapplied) this.enqueue(d);
    this.server = createServer((req, res) => {
      try {
        this.receive(req, res);
      } catch (e) {
        this.log?.error({ err: (e as Error).message }, 'listener error');
        if (!res.headersSent) answer(res, 500, { error: 'internal' });
      }
    });
  }

  static async start(o: ListenerOptions): Promise<WebhookListener> {
    if (!o.secret) throw new RangeError('a webhook secret is required: unsigned deliveries are never applied');
    const stateDir = resolve(o.stateDir);
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const lock = await acquireLock(join(stateDir, 'listen.lock'), { staleMs: 60_000, purpose: 'listen' });
    const listener = new WebhookListener(o, stateDir, lock);
    try {
      await listener.listen();
    } catch (e) {
      listener.release();
      throw e;
    }
    return listener;
  }

  /** Remembers the inbox's keys; returns its deliveries not applied. */
  private recover(lines: InboxLine[]): DeliveryLine[] {
    const appliedIds = new Set<string>();
    for (const e of lines) {
      if (e.t === 'delivery') this.remember(e);
      else if (e.t === 'applied') appliedIds.add(e.deliveryId);
    }
    return lines.filter((e): e is DeliveryLine => e.t === 'delivery' && !appliedIds.has(e.deliveryId));
  }

  private remember(d: DeliveryLine): void {
    for (const k of [`id:${d.deliveryId}`, `event:${d.eventKey}`]) {
      this.seen.delete(k);
      this.seen.add(k);
    }
    while (this.seen.size > SEEN_MAX) this.seen.delete(this.seen.values().next().value!);
  }

  private async listen(): Promise<void> {
    const host = this.o.host ?? '127.0.0.1';
    await new Promise<void>((ok, fail) => {
      this.server.once('error', fail);
      this.server.listen(this.o.port, host, () => ok());
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${this.port}/`;
    this.log?.info(
      { url: this.url, stateDir: this.stateDir, results: this.o.results ?? [], watchDirs: this.o.watchDirs ?? [] },
      'listening',
    );
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
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
      this.accept(req, Buffer.concat(chunks), res);
    });
    req.on('error', () => answer(res, 400, { error: 'bad request' }));
  }

  private accept(req: IncomingMessage, raw: Buffer, res: ServerResponse): void {
    let verified: ReturnType<typeof verifyWebhook>;
    try {
      verified = verifyWebhook({ rawBody: raw, headers: req.headers, secret: this.o.secret });
    } catch (e) {
      if (!(e instanceof WebhookVerificationError)) throw e;
      this.counts.rejected++;
      const deliveryId = req.headers['x-service-delivery-id'];
      this.log?.warn({ reason: e.reason, deliveryId, remote: req.socket.remoteAddress }, 'delivery refused, nothing applied');
      return answer(res, e.reason === 'not-json' || e.reason === 'invalid-event' ? 400 : 401, { error: e.reason });
    }
    const id = verified.deliveryId;
    // all of the body's data, not only the fields the spec names
    const key = eventKey(JSON.parse(raw.toString('utf8')) as WebhookEvent);
    if (this.seen.has(`id:${id}`) || this.seen.has(`event:${key}`)) {
      this.counts.duplicates++;
      this.log?.info(
        { deliveryId: id, eventType: verified.event.eventType, eventKey: key, sameDeliveryId: this.seen.has(`id:${id}`) },
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
      this.inbox.append(line, { sync: true });
    } catch (e) {
      this.log?.error({ deliveryId: id, err: (e as Error).message }, 'delivery not recorded: answered 503 so the service sends it again');
      return answer(res, 503, { error: 'not recorded' });
    }
    this.remember(line);
    this.counts.accepted++;
    answer(res, 200, { received: true });
    if (!this.closed) this.enqueue(line);
  }

  private enqueue(d: DeliveryLine): void {
    this.chain = this.chain
      .then(() => this.apply(d))
      .catch((e: unknown) => {
        this.log?.error(
          { deliveryId: d.deliveryId, err: (e as Error).message },
          'delivery not applied: it is applied again on the next start',
        );
      });
  }

  private async apply(d: DeliveryLine): Promise<void> {
    const event = JSON.parse(d.raw) as WebhookEvent;
    let rows = 0;
    if (event.eventType === 'payout.status.changed' || event.eventType === 'payout.status.changed.v1') {
      rows = await this.applyStatusEvent(event, d.deliveryId);
    } else {
      const { eventType, data } = event as WalletEvent;
      const { transactionType, amount, currency, reference, transactionId } = data;
      const fields = { deliveryId: d.deliveryId, eventType, transactionType, amount, currency, reference, transactionId };
      this.log?.info(fields, eventType === 'wallet.credited' ? 'wallet credited' : 'wallet debited');
    }
    this.inbox.append({ t: 'applied', deliveryId: d.deliveryId, rows, at: new Date().toISOString() });
    this.counts.applied++;
  }

  /** Returns the rows changed. */
  private async applyStatusEvent(e: PayoutStatusChangedEvent, deliveryId: string): Promise<number> {
    const { payoutId, newStatus: status, newStatusDetail: statusDetail, informationRequests, changedAt: at, reason } = e.data;
    const update: StatusUpdate = { payoutId, status, statusDetail, informationRequests, at, source: 'webhook', deliveryId, reason };
    const targets = targetFiles(this.o);
    const r = await applyStatus(
      targets.filter((t) => mayHold(t.file, payoutId)),
      [update],
      // a payout no file holds: its journal is searched in every watch folder's state too
      {
        stateDirs: targets.flatMap((t) => t.stateDirs ?? []),
        stateRoots: this.o.stateRoots,
        shared: this.o.shared,
        logger: this.log,
        context: { deliveryId },
      },
    );
    return r.applied.length;
  }

  stats(): ListenerStats {
    return { ...this.counts };
  }

  /** Resolves when every accepted delivery has been applied. */
  async idle(): Promise<void> {
    let last: Promise<void>;
    do {
      last = this.chain;
      await last;
    } while (last !== this.chain);
  }

  /** The deliveries accepted are applied before the state folder is let go. */
  async close(): Promise<void> {
    this.closed = true;
    await new Promise<void>((ok) => {
      this.server.close(() => ok());
      this.server.closeAllConnections?.();
    });
    await this.chain;
    this.release();
  }

  private release(): void {
    clearInterval(this.heartbeat);
    this.inbox.close();
    this.lock.release();
  }
}

export const startListener = (o: ListenerOptions): Promise<RunningListener> => WebhookListener.start(o);

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** `--register URL`: creates the business's one subscription, or points the existing one here. */
export async function registerSubscription(
  client: PayoutClient,
  url: string,
  secret: string,
): Promise<{ action: 'created' | 'updated'; id: string; url: string }> {
  // the stored record's fields are "not shown" (spec §4.13)
  const existing = (await client.listWebhooks()).data[0];
  if (existing) {
    const s = await client.updateWebhook(existing.id, { url, secret });
    return { action: 'updated', id: s.id, url: s.url ?? url };
  }
  const s = await client.registerWebhook({ url, secret });
  return { action: 'created', id: s.id, url: s.url ?? url };
}
