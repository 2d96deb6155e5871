// One parsed request, and its headers read one way.
import type { IncomingHttpHeaders } from 'node:http';
import type { Business } from './store.ts';

export interface Request {
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  rawBody: Buffer;
  /** Counted even past the size limit. */
  bodySize: number;
  business: Business;
}

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}
