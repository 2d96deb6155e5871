// Route matching: static segments before parameters, in the order routes are listed, so
// GET {payouts}/swaps is never taken for GET {payouts}/{id}.
import type { Route } from './context.ts';

export interface Match {
  route: Route;
  params: Record<string, string>;
}

export class Router {
  constructor(private readonly routes: Route[]) {}

  /** The route for a method and path, with its parameters. */
  match(method: string, path: string): Match | undefined {
    const segments = split(path);
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const params = matchPattern(split(route.pattern), segments);
      if (params) return { route, params };
    }
    return undefined;
  }
}

const split = (p: string): string[] => p.split('/').filter(Boolean);

function matchPattern(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segments[i]!;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(s);
      } catch {
        return undefined;
      }
    } else if (p !== s) return undefined;
  }
  return params;
}
