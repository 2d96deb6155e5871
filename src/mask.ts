// Apart from log.ts so that validation (which masks the values it quotes) does not load the logger.

/** Account numbers, IBANs and the like in logs and problems: the last 4 characters. */
export function maskAccount(value: string): string {
  const v = value.replace(/\s+/g, '');
  if (v.length <= 4) return '*'.repeat(v.length);
  return '*'.repeat(Math.min(v.length - 4, 8)) + v.slice(-4);
}
