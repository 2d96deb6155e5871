// The ISO 20022 messages the tool reads and writes (issue 41): their namespaces and how their versions pair.
// Shared by the pain.001 reader (src/input/) and the pain.002 / camt.053 writers; append only.

/** The message identifiers (MsgNmId) of the versions handled. */
export const PAIN001_VERSIONS = ['pain.001.001.03', 'pain.001.001.09'] as const;
export type Pain001Version = (typeof PAIN001_VERSIONS)[number];
export const PAIN002_VERSIONS = ['pain.002.001.03', 'pain.002.001.10'] as const;
export type Pain002Version = (typeof PAIN002_VERSIONS)[number];
export const CAMT053_VERSIONS = ['camt.053.001.02', 'camt.053.001.08'] as const;
export type Camt053Version = (typeof CAMT053_VERSIONS)[number];
export type IsoMessage = Pain001Version | Pain002Version | Camt053Version;

/** A message's Document namespace: `urn:iso:std:iso:20022:tech:xsd:` + its identifier. */
export const isoNamespace = (message: IsoMessage): string => `urn:iso:std:iso:20022:tech:xsd:${message}`;

/** The pain.001 version of a Document namespace, or undefined when it is none of PAIN001_VERSIONS. */
export function pain001VersionOf(namespace: string): Pain001Version | undefined {
  return PAIN001_VERSIONS.find((v) => isoNamespace(v) === namespace);
}

/** The status report answering a payment initiation: the same version family (.03 → .03, .09 → .10). */
export const PAIN002_FOR: Record<Pain001Version, Pain002Version> = {
  'pain.001.001.03': 'pain.002.001.03',
  'pain.001.001.09': 'pain.002.001.10',
};

/** The statement of the same family as a payment initiation (.03 → camt.053.001.02, .09 → .08). */
export const CAMT053_FOR: Record<Pain001Version, Camt053Version> = {
  'pain.001.001.03': 'camt.053.001.02',
  'pain.001.001.09': 'camt.053.001.08',
};
