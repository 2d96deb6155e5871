// Fault injection (contract.ts FaultConfig), drawn from a seeded PRNG so a campaign replays under its
// seed and request order; the two swap faults are deterministic, spent one per swap.
import { FaultConfigSchema, type FaultConfig, type GatewayBody, type RouteName } from './contract.ts';
import { STATUS_CODES } from 'node:http';
import type { Reply } from './http.ts';

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FaultDecision {
  latencyMs: number;
  spurious429: boolean;
  errorBeforeEffect: number | null;
  afterCreate:
    { kind: 'none' } | { kind: 'error'; status: number } | { kind: 'drop' } | { kind: 'gateway'; status: number; body: GatewayBody };
}

const NO_FAULT: FaultDecision = { latencyMs: 0, spurious429: false, errorBeforeEffect: null, afterCreate: { kind: 'none' } };
const FIVE_XX = [500, 502, 503] as const;

export class Faults {
  private config = FaultConfigSchema.parse({});
  private readonly random: () => number;
  /** A GET pairs arrived since the configuration was set or the rate last moved. */
  private pairsRead = false;

  constructor(initial: Partial<FaultConfig> | undefined, seed: number) {
    this.set(initial ?? {});
    this.random = mulberry32(seed);
  }

  /** Replaces the whole configuration (`{}` clears); an invalid one is a TypeError and changes nothing. */
  set(input: unknown): void {
    const r = FaultConfigSchema.safeParse(input);
    if (!r.success)
      throw new TypeError(`faults: ${r.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`).join('; ')}`);
    this.config = r.data;
    this.pairsRead = false;
  }

  get(): FaultConfig {
    return structuredClone(this.config);
  }

  /** Five draws per targeted request, in arrival order; without `routes`, spec routes only. */
  decide(route: RouteName, spec: boolean): FaultDecision {
    const c = this.config;
    if (route === 'pairs') this.pairsRead = true;
    const targeted = c.routes ? c.routes.includes(route) : spec;
    if (!targeted) return NO_FAULT;
    const [u1, u2, u3, u4, u5] = [this.random(), this.random(), this.random(), this.random(), this.random()];
    const [min, max] = c.latencyMs;
    const status = FIVE_XX[Math.floor(u4 * FIVE_XX.length)] ?? 500;
    const creating = route === 'initiate' || route === 'swap';
    let afterCreate: FaultDecision['afterCreate'] = { kind: 'none' };
    // One draw, u5, split between the after-create faults: the draws, and so a replay, are the same with or without a gateway.
    const gateway = c.gatewayAfterCreate;
    if (creating && u5 < c.dropAfterCreate) afterCreate = { kind: 'drop' };
    else if (creating && u5 < c.dropAfterCreate + c.errorAfterCreate) afterCreate = { kind: 'error', status };
    else if (creating && gateway && u5 < c.dropAfterCreate + c.errorAfterCreate + gateway.probability) {
      const statuses = Array.isArray(gateway.status) ? gateway.status : [gateway.status];
      afterCreate = { kind: 'gateway', status: statuses[Math.floor(u4 * statuses.length)] ?? statuses[0]!, body: gateway.body };
    }
    return {
      latencyMs: min + Math.floor(u1 * (max - min + 1)),
      spurious429: u2 < c.spurious429,
      errorBeforeEffect: u3 < c.errorBeforeEffect ? status : null,
      afterCreate,
    };
  }

  /** For a new swap: the percent its pair's rate moves now, after a pairs read, spending one of `times`. */
  takeRateMove(): number | undefined {
    const move = this.config.rateMoveAfterPairsRead;
    if (!move || !this.pairsRead) return undefined;
    this.pairsRead = false;
    if (move.times > 1) move.times--;
    else delete this.config.rateMoveAfterPairsRead;
    return move.pct;
  }

  /** For a new swap: whether it comes out REJECTED; spends one. */
  takeSwapRejection(): boolean {
    const n = this.config.rejectNextSwaps ?? 0;
    if (n <= 0) return false;
    if (n > 1) this.config.rejectNextSwaps = n - 1;
    else delete this.config.rejectNextSwaps;
    return true;
  }
}

/** A gateway's reason phrases; any other status reads 'Error'. 499 is nginx's own. */
const GATEWAY_REASON: Record<number, string | undefined> = {
  ...Object.fromEntries([400, 403, 404, 408, 425, 500, 502, 503, 504].map((s) => [s, STATUS_CODES[s]])),
  499: 'Client Closed Request',
};

/** A gateway's answer replacing the service's success (fault gatewayAfterCreate): nginx HTML, its own JSON, text, or nothing. */
export function gatewayReply(status: number, body: GatewayBody): Reply {
  const reason = GATEWAY_REASON[status] ?? 'Error';
  const title = `${status} ${reason}`;
  if (body === 'empty') return { status, headers: { 'content-length': '0' } };
  const answers: Record<typeof body, [string, string]> = {
    html: [
      'text/html',
      `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
    ],
    json: ['application/json', JSON.stringify({ message: `${reason} (gateway)` })],
    text: ['text/plain', `${title}\n`],
  };
  const [type, text] = answers[body];
  return { status, body: Buffer.from(text), headers: { 'content-type': type } };
}
