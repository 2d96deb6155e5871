// The sandbox in a process of its own, for the campaigns (campaign.ts, swap-campaign.ts,
// ledger-campaign.ts) and the two-process pace test (test/client/pace.e2e.test.ts).
//
// The sandbox dates a request when its event loop gets to it. Hosted in a campaign's process, its
// loop would also run the campaign (spawning, polling, reading results), and a stall there bunches
// the arrival dates it counts against the rolling second: the measurement would count our own
// stalls as requests sent too close together. So it runs alone, as a real service would, driven
// through its control routes (/_sandbox/faults, /_sandbox/requests) and counting the key's requests
// to the campaign over IPC (a kill schedule needs the count as it goes).
//
// It also keeps the Idempotency-Key of every initiate it receives (the request log has no headers)
// and gives them, with the key that created each payout, on request: a campaign on the team ledger
// checks that every key the service received has its `initiating` line in the database.
import { fork } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startSandbox, type SandboxOptions } from '../../src/sandbox/start-sandbox.ts';
import type { FaultConfig, RequestLogEntry } from '../../src/sandbox/contract.ts';
import { IDEMPOTENCY_KEY_HEADER } from '../../src/spec/endpoints.ts';
import { KEY } from '../engine/helpers.ts';

/** The initiates' Idempotency-Keys, as received, and the key that created each payout. */
export interface InitiateKeys {
  received: string[];
  created: { key: string; payoutId: string }[];
}

// (this file, forked by sandboxProcess below)
if (process.argv[2] === '--sandbox') {
  const sb = await startSandbox({
    ...(JSON.parse(process.argv[3]!) as SandboxOptions),
    // (a request still answered as the campaign tears down finds the channel closed: nobody is counting)
    onRequest: (e) =>
      void (
        e.apiKey === KEY &&
        e.route !== 'control' &&
        process.connected &&
        process.send!(e.route === 'initiate' ? 2 : 1, undefined, {}, () => {})
      ),
  });
  const received: string[] = [];
  subscribe('http.server.request.start', (m) => {
    const req = (m as { request: IncomingMessage }).request;
    const key = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (req.method === 'POST' && req.url?.endsWith('/initiate') && typeof key === 'string') received.push(key);
  });
  process.on('message', (m) => {
    if (m !== 'keys') return;
    // an idempotency slot is `businessId NUL key` (src/sandbox/idempotency.ts)
    const created = sb
      .snapshot()
      .idempotency.flatMap((e) => (e.recordId ? [{ key: e.slot.split('\u0000')[1]!, payoutId: e.recordId }] : []));
    process.send!({ keys: { received, created } satisfies InitiateKeys });
  });
  process.send!({ url: sb.url });
  process.on('disconnect', () => void sb.close().then(() => process.exit(0)));
}

export interface SandboxProcess {
  url: string;
  /** Answered requests of the key so far (control routes left out). */
  keyRequests(): number;
  /** Answered initiates of the key so far (among keyRequests). */
  keyInitiates(): number;
  setFaults(f: Partial<FaultConfig>): Promise<void>;
  requestLog(): Promise<RequestLogEntry[]>;
  initiateKeys(): Promise<InitiateKeys>;
  close(): Promise<void>;
}

export async function sandboxProcess(options: SandboxOptions): Promise<SandboxProcess> {
  const child = fork(fileURLToPath(import.meta.url), ['--sandbox', JSON.stringify(options)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let [count, initiates] = [0, 0];
  const [first] = (await once(child, 'message')) as [{ url: string }];
  child.on('message', (m) => {
    if (m === 1 || m === 2) count++;
    if (m === 2) initiates++;
  });
  const control = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${first.url}/_sandbox/${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new Error(`sandbox ${method} ${path}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<unknown>;
  };
  return {
    url: first.url,
    keyRequests: () => count,
    keyInitiates: () => initiates,
    setFaults: async (f) => void (await control('PUT', 'faults', f)),
    requestLog: async () => ((await control('GET', 'requests')) as { data: RequestLogEntry[] }).data,
    initiateKeys: async () => {
      const answer = new Promise<InitiateKeys>((resolve) => {
        const on = (m: unknown) => {
          if (typeof m !== 'object' || m === null || !('keys' in m)) return;
          child.off('message', on);
          resolve((m as { keys: InitiateKeys }).keys);
        };
        child.on('message', on);
      });
      child.send('keys');
      return answer;
    },
    close: async () => {
      child.disconnect();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}
