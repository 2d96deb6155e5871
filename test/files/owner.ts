// A lock's owner record as if `owner` held it (src/files/lock.ts): a dead, foreign or reused holder.
import { writeFileSync } from 'node:fs';
import type { LockOwner } from '../../src/files/lock.ts';

export const writeOwner = (path: string, owner: LockOwner): void => writeFileSync(path, JSON.stringify(owner) + '\n');
