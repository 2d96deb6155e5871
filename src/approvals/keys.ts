// Approvers' Ed25519 keys (node:crypto); a public key is its 32 raw bytes in base64, or a PEM block.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { sha256Hex } from '../engine/identity.ts';

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): then the 32 raw bytes. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export class KeyError extends Error {
  override readonly name = 'KeyError';
}

export interface NewKeyPair {
  /** PKCS#8 PEM: never printed or logged. */
  privatePem: string;
  publicKey: string;
  fingerprint: string;
}

export function newKeyPair(): NewKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = rawOf(publicKey);
  return {
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: raw.toString('base64'),
    fingerprint: fingerprintOf(raw),
  };
}

const rawOf = (k: KeyObject): Buffer => k.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);

/** The first 16 hex of the raw key's sha256. */
export function fingerprintOf(raw: Buffer): string {
  return sha256Hex(raw).slice(0, 16);
}

/** `raw`: the one form compared and fingerprinted. */
export function parsePublicKey(text: string): { key: KeyObject; raw: Buffer } {
  const t = text.trim();
  let key: KeyObject;
  try {
    if (t.startsWith('-----BEGIN')) key = createPublicKey(t);
    else {
      const raw = Buffer.from(t, 'base64');
      if (raw.length !== 32 || raw.toString('base64') !== t) throw new KeyError('not 32 bytes of base64');
      key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    }
  } catch {
    throw new KeyError('not an Ed25519 public key (32 bytes in base64, or a PEM block)');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new KeyError(`a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return { key, raw: rawOf(key) };
}

/** The file's text never reaches a message. */
export function parsePrivateKey(pem: string, where: string): { key: KeyObject; publicKey: string; fingerprint: string } {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new KeyError(`${where} is not a private key in PEM (make one with \`payout-batch approver-key new --as NAME\`)`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new KeyError(
      `${where} holds a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519 (make one with \`payout-batch approver-key new\`)`,
    );
  const raw = rawOf(createPublicKey(key));
  return { key, publicKey: raw.toString('base64'), fingerprint: fingerprintOf(raw) };
}
