// The ISO 20022 messages read and written: their namespaces and how their versions pair.

export const PAIN001_VERSIONS = ['pain.001.001.03', 'pain.001.001.09'] as const;
export type Pain001Version = (typeof PAIN001_VERSIONS)[number];
export const PAIN002_VERSIONS = ['pain.002.001.03', 'pain.002.001.10'] as const;
export type Pain002Version = (typeof PAIN002_VERSIONS)[number];
/** The camt.053 statement is written in one version. */
export type IsoMessage = Pain001Version | Pain002Version | 'camt.053.001.02';

export const isoNamespace = (message: IsoMessage): string => `urn:iso:std:iso:20022:tech:xsd:${message}`;

export function pain001VersionOf(namespace: string): Pain001Version | undefined {
  return PAIN001_VERSIONS.find((v) => isoNamespace(v) === namespace);
}

/** The status report answering a payment initiation: the same version family (.03 → .03, .09 → .10). */
export const PAIN002_FOR: Record<Pain001Version, Pain002Version> = {
  'pain.001.001.03': 'pain.002.001.03',
  'pain.001.001.09': 'pain.002.001.10',
};
