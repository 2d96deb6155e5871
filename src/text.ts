import { groupThousands } from './money.ts';

/** 3 -> "3 rows", 1 -> "1 row", 12000 -> "12,000 rows". */
export const plural = (n: number, word: string) => `${groupThousands(String(n))} ${word}${n === 1 ? '' : 's'}`;
