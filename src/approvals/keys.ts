// Ed25519 keys of approvers (node:crypto): a key pair made by `approver-key new`, the private key
// read back by `approve`, and public keys as approvers lists and approvals carry them (the 32 raw
// bytes in base64, or a PEM block), each known by a short fingerprint.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { sha256Hex } from '../engine/identity.ts';

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): then the 32 raw bytes. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export class KeyError extends Error {
  override readonly name = 'KeyError';
}

export interface NewKeyPair {
  /** PKCS#8 PEM: the approver's secret, never printed or logged. */
  privatePem: string;
  /** The 32 raw bytes of the public key, base64. */
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

/** sha256 of the raw public key, the first 16 hex digits (64 bits), as `ssh-keygen -l` shows a key. */
export function fingerprintOf(raw: Buffer): string {
  return sha256Hex(raw).slice(0, 16);
}

/**
 * A public key as written in an approvers list or an approval: the raw 32 bytes in base64, or a
 * PEM block. Returns the KeyObject and its raw bytes (the one form compared and fingerprinted);
 * throws KeyError when it is neither, or not Ed25519.
 */
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

/** An approver's private key file (PEM): the key and its public half. The file's text never reaches a message. */
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
