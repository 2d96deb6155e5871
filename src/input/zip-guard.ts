// Bounds a workbook before SheetJS sees it: SheetJS unpacks every part of an .xlsx outside the V8
// heap (a 400 KB zip bomb took ~920 MB). The zip's directory is walked as SheetJS walks it, then,
// since declared sizes lie, every deflated part is inflated and counted, nothing kept.
import { createInflateRaw } from 'node:zlib';
import { InputError } from './input-errors.ts';
import { MAX_EXCEL_FILE_BYTES, MAX_PART_RATIO, MAX_UNPACKED_BYTES, RATIO_MIN_BYTES, mb } from './size-limits.ts';

/** A workbook too large to read: what is too large, and what to do instead. */
const tooLarge = (file: string, what: string) => new InputError('TOO_LARGE', file, `${file}: ${what}; save the sheet as CSV or split it.`);

export function checkWorkbookFileSize(file: string, bytes: number): void {
  if (bytes > MAX_EXCEL_FILE_BYTES)
    throw tooLarge(file, `the workbook is ${mb(bytes)}, over the ${mb(MAX_EXCEL_FILE_BYTES)} limit for Excel files`);
}

const tooBig = (file: string) => tooLarge(file, `the workbook unpacks to more than ${mb(MAX_UNPACKED_BYTES)}`);

const bombed = (out: number, packed: number) => out > RATIO_MIN_BYTES && out > MAX_PART_RATIO * Math.max(1, packed);
const bomb = (file: string, part: string, out: number, packed: number) =>
  tooLarge(
    file,
    `part ${part} of the workbook unpacks to ${mb(out)} from ${Math.max(1, Math.round(packed / 1024))} KB, over ${MAX_PART_RATIO} times its size (a zip bomb?)`,
  );

export const unreadable = (file: string, why: string) =>
  new InputError('UNSUPPORTED_FORMAT', file, `${file}: not a readable Excel workbook (${why}).`);

export interface Part {
  name: string;
  method: number;
  /** Where its data starts (after the local header), as SheetJS reads it. */
  dataStart: number;
  packed: number;
  /** The largest unpacked size any of its headers declares. */
  declared: number;
}

/** zip64 sizes (extra field 0x0001) as SheetJS reads them: uncompressed, then compressed, 8 bytes each. */
function zip64Sizes(extra: Buffer): { usz?: number; csz?: number } {
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p);
    const size = extra.readUInt16LE(p + 2);
    const body = extra.subarray(p + 4, p + 4 + size);
    if (id === 0x0001) {
      return {
        usz: body.length >= 8 ? Number(body.readBigUInt64LE(0)) : undefined,
        csz: body.length >= 16 ? Number(body.readBigUInt64LE(8)) : undefined,
      };
    }
    p += 4 + size;
  }
  return {};
}

/** The parts SheetJS will unpack, read from the zip's directory as cfb's parse_zip reads it (zip64 sizes included). */
export function zipParts(buf: Buffer, file: string): Part[] {
  let eocd = buf.length - 4;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0 || eocd + 22 > buf.length) throw unreadable(file, 'no zip directory: is the file cut short?');
  const count = buf.readUInt16LE(eocd + 8);
  let p = buf.readUInt32LE(eocd + 16);
  const parts: Part[] = [];
  for (let i = 0; i < count; i++) {
    if (p + 46 > buf.length) throw unreadable(file, 'a broken zip directory');
    let packed = buf.readUInt32LE(p + 20);
    const sizes = [buf.readUInt32LE(p + 24)];
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('latin1', p + 46, Math.min(buf.length, p + 46 + nameLen));
    const z64 = zip64Sizes(buf.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen));
    if (z64.usz !== undefined) sizes.push(z64.usz);
    if (z64.csz) packed = z64.csz;
    p += 46 + nameLen + extraLen + commentLen;

    if (local + 30 > buf.length) throw unreadable(file, `a broken zip entry ${name}`);
    const method = buf.readUInt16LE(local + 8);
    sizes.push(buf.readUInt32LE(local + 22));
    const localNameLen = buf.readUInt16LE(local + 26);
    const localExtraLen = buf.readUInt16LE(local + 28);
    const localZ64 = zip64Sizes(buf.subarray(local + 30 + localNameLen, local + 30 + localNameLen + localExtraLen));
    if (localZ64.usz !== undefined) sizes.push(localZ64.usz);
    parts.push({ name, method, dataStart: local + 30 + localNameLen + localExtraLen, packed, declared: Math.max(...sizes) });
  }
  return parts;
}

/** Inflates `data`, counting the output without keeping it, up to `budget`; a broken stream counts what it gave. */
function inflatedSize(data: Buffer, budget: number): Promise<{ out: number; consumed: number; over: boolean }> {
  return new Promise((resolve) => {
    const z = createInflateRaw({ chunkSize: 64 * 1024 });
    let out = 0;
    let done = false;
    const finish = (over: boolean) => {
      if (done) return;
      done = true;
      resolve({ out, consumed: z.bytesWritten, over });
      z.destroy();
    };
    z.on('data', (chunk: Buffer) => {
      out += chunk.length;
      if (out > budget) finish(true);
    });
    z.on('end', () => finish(false));
    z.on('error', () => finish(false));
    z.end(data);
  });
}

/** Refuses (TOO_LARGE) an .xlsx that declares or unpacks to too much, or a part to an extreme ratio. */
export async function checkWorkbook(buf: Buffer, file: string): Promise<void> {
  const parts = zipParts(buf, file);
  let declared = 0;
  for (const part of parts) {
    declared += part.declared;
    if (declared > MAX_UNPACKED_BYTES) throw tooBig(file);
    if (bombed(part.declared, part.packed)) throw bomb(file, part.name, part.declared, part.packed);
  }
  let actual = 0;
  for (const part of parts) {
    if (part.dataStart > buf.length) continue;
    if (part.method === 0) {
      actual += Math.min(part.packed, buf.length - part.dataStart);
    } else if (part.method === 8) {
      const r = await inflatedSize(buf.subarray(part.dataStart), MAX_UNPACKED_BYTES - actual);
      actual += r.out;
      if (r.over) throw tooBig(file);
      if (bombed(r.out, r.consumed)) throw bomb(file, part.name, r.out, r.consumed);
    } // other methods: SheetJS refuses them
    if (actual > MAX_UNPACKED_BYTES) throw tooBig(file);
  }
}
