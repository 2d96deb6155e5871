// Who runs this process, for what records a person: a plan's maker, a policy's setter, a clearance's author.
import { userInfo } from 'node:os';

/** The OS user's name; $USER (or "unknown") where the user database has no entry for this uid (a container's): userInfo() throws there. */
export function osUserName(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER || env.USERNAME || 'unknown';
  }
}
