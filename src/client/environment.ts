// Production and sandbox from one gateway host (spec §1.5); production only when asked for by name.
import { sandboxHostOf } from '../spec/endpoints.ts';
import { attempt } from '../files/attempt.ts';
import { isLoopbackHost } from '../spec/schemas.ts';
import { ApiKey, ClientConfigError, type KeyEnvironment } from './api-key.ts';
import { maskUrl } from '../mask.ts';

export const ENVIRONMENTS = ['local', 'sandbox', 'production'] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

export interface ResolvedEnvironment {
  /** 'custom' when only --base-url was given. */
  name: EnvironmentName | 'custom';
  /** Production keys only in production. */
  keyClass: KeyEnvironment;
  /** undefined for local: known once the embedded sandbox has started. */
  baseUrl: string | undefined;
}

export interface EnvironmentOptions {
  /** --env, else $PAYOUT_ENV. */
  env?: string;
  baseUrl?: string;
  /** The production gateway, e.g. gateway.example.com */
  gatewayHost?: string;
  /** The variables of the command (the CLI's io.env), never read from the process here. */
  vars: NodeJS.ProcessEnv;
}

function normaliseBaseUrl(raw: string): string {
  if (!URL.canParse(raw)) throw new ClientConfigError(`base URL is not a URL: ${maskUrl(raw)}`);
  const u = new URL(raw);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ClientConfigError(`base URL must be http(s): ${maskUrl(raw)}`);
  if (u.username || u.password) throw new ClientConfigError('base URL must not carry a user name or password');
  if (u.search || u.hash) throw new ClientConfigError('base URL must not carry a query or fragment');
  // the key in a header in clear text is readable on every hop between
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) {
    throw new ClientConfigError(
      `refusing to send the API key over plain http:// to ${u.host}: use https:// ` +
        '(plain http is allowed only to this machine: localhost, 127.0.0.0/8, ::1). Nothing was sent.',
      'refused',
    );
  }
  return u.origin + u.pathname.replace(/\/+$/, '');
}

/** The account a base URL names, however spelled: lower case, no default port, trailing dot or slash, every loopback as 127.0.0.1. */
export function accountOf(baseUrl: string): string {
  const u = new URL(baseUrl);
  u.hostname = isLoopbackHost(u.hostname) ? '127.0.0.1' : u.hostname.replace(/\.$/, '');
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`.toLowerCase();
}

function normaliseHost(raw: string): string {
  const h = raw
    .trim()
    .replace(/^https?:\/\//i, '')
    .replace(/\/+$/, '')
    .toLowerCase();
  if (!h || /[/?#@\s]/.test(h)) throw new ClientConfigError(`gateway host must be a bare host name, not "${maskUrl(raw)}"`);
  if (!h.startsWith('gateway.')) {
    throw new ClientConfigError(`gateway host must start with "gateway." (spec §1.5), not "${h}"`);
  }
  return h;
}

export function resolveEnvironment(options: EnvironmentOptions): ResolvedEnvironment {
  const { vars } = options;
  const rawName = options.env ?? vars.PAYOUT_ENV;
  const baseUrl = options.baseUrl ?? vars.PAYOUT_BASE_URL;
  const rawHost = options.gatewayHost ?? vars.PAYOUT_GATEWAY_HOST;
  let name: EnvironmentName | undefined;
  if (rawName !== undefined && rawName !== '') {
    const n = rawName.trim().toLowerCase();
    if (!(ENVIRONMENTS as readonly string[]).includes(n)) {
      throw new ClientConfigError(`environment must be one of ${ENVIRONMENTS.join(', ')}, not "${rawName}"`);
    }
    name = n as EnvironmentName;
    // README "Configuration and keys": production applies only when named on the command line.
    if (name === 'production' && options.env === undefined)
      throw new ClientConfigError(
        'PAYOUT_ENV=production alone does not pay for real: name production on the command line (--env production)',
        'refused',
      );
  }

  if (baseUrl) {
    if (name === 'local') throw new ClientConfigError('--base-url and --env local exclude each other: local starts its own sandbox');
    const url = normaliseBaseUrl(baseUrl);
    // the production gateway's host, when one is configured (a staging host names none)
    const production = rawHost ? attempt(() => normaliseHost(rawHost)) : undefined;
    if (name !== 'production' && new URL(url).hostname.replace(/\.$/, '') === production && !production.startsWith('gateway.staging.'))
      throw new ClientConfigError(`${url} is the production host: name --env production on the command line to pay for real`, 'refused');
    return { name: name ?? 'custom', keyClass: name === 'production' ? 'production' : 'sandbox', baseUrl: url };
  }

  name ??= 'sandbox'; // never production
  if (name === 'local') return { name, keyClass: 'sandbox', baseUrl: undefined };

  if (!rawHost) {
    throw new ClientConfigError(
      `the ${name} environment needs the production gateway host: set PAYOUT_GATEWAY_HOST ` +
        '(or --gateway-host), e.g. gateway.example.com; the sandbox host is derived from it. ' +
        'Or use --env local, or --base-url.',
    );
  }
  const host = normaliseHost(rawHost);
  const isStagingHost = host.startsWith('gateway.staging.');
  if (name === 'production') {
    if (isStagingHost) throw new ClientConfigError(`${host} is the sandbox (staging) host, not production`, 'refused');
    return { name, keyClass: 'production', baseUrl: `https://${host}` };
  }
  return { name, keyClass: 'sandbox', baseUrl: `https://${isStagingHost ? host : sandboxHostOf(host)}` };
}

/** Refuses a key labelled for the other environment, or seen working in it on this machine (whatever its label). */
export function assertKeyFitsEnvironment(key: ApiKey, environment: ResolvedEnvironment, seenIn?: KeyEnvironment): void {
  const refuse = (label: KeyEnvironment, why: string) => {
    const where = environment.name === 'custom' ? `the custom base URL (name --env production to use a production key)` : environment.name;
    throw new ClientConfigError(
      `refusing to use a ${label} key (${why}) with ${where}: keys must never be mixed between environments`,
      'refused',
    );
  };
  if (key.environment && key.environment !== environment.keyClass) refuse(key.environment, `labelled by ${key.labelSource}`);
  // (what the service answered outweighs any label: a key that worked in one environment is never sent to the other)
  if (seenIn && seenIn !== environment.keyClass) refuse(seenIn, `this machine has used it in ${seenIn}`);
}
