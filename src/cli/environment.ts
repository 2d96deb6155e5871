// The environment labels of client/environment.ts (local, sandbox, production, custom) in a
// treasurer's words, for every place the CLI names one: the plan, the confirmation's context, account.

export const ENVIRONMENT_MEANING: Record<string, string> = {
  local: 'the sandbox embedded in this process (--env local); no money moves',
  sandbox: "the service's sandbox (staging) host; no money moves",
  production: 'the live service: real money moves',
  custom: 'a base URL given with --base-url or $PAYOUT_BASE_URL; not a known service environment',
};

/** "custom (a base URL given with --base-url ...; not a known service environment) http://..." */
export function environmentText(name: string, baseUrl?: string): string {
  const meaning = ENVIRONMENT_MEANING[name];
  return `${name}${meaning ? ` (${meaning})` : ''}${baseUrl ? ` ${baseUrl}` : ''}`;
}
