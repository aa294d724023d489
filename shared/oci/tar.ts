// A small reader of tar archives (ustar, with pax and GNU long names), enough for image layers:
// regular files with their bytes, directories, links and the names of whiteouts.
import { OciError } from './errors.js';

/** One archive entry. */
export interface TarEntry {
  /** Path without a leading `./` or `/`. */
  path: string;
  kind: 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';
  /** File content (empty for other kinds). */
  data: Buffer;
  /** Link target for links. */
  linkTarget: string;
}

const block = 512;

/** Reads every entry of a tar archive held in memory. */
export function readTar(archive: Buffer, what: string): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax: Record<string, string> = {};
  const bad = (why: string) =>
    new OciError('BadResponse', `${what}: not a valid tar archive: ${why}`);
  while (offset + block <= archive.length) {
    const header = archive.subarray(offset, offset + block);
    if (header.every((b) => b === 0)) break;
    if (!checksumMatches(header)) throw bad(`bad header checksum at byte ${offset}`);
    const size = octal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] ?? 0);
    const dataStart = offset + block;
    const dataEnd = dataStart + size;
    if (dataEnd > archive.length) throw bad(`entry at byte ${offset} runs past the end`);
    const data = archive.subarray(dataStart, dataEnd);
    offset = dataStart + Math.ceil(size / block) * block;
    switch (type) {
      case 'L':
        longName = cString(data);
        continue;
      case 'K':
        longLink = cString(data);
        continue;
      case 'x':
        pax = parsePax(data);
        continue;
      case 'g':
        continue;
    }
    const prefix = cString(header.subarray(345, 500));
    const name = cString(header.subarray(0, 100));
    const path = normalize(pax.path ?? longName ?? (prefix === '' ? name : `${prefix}/${name}`));
    const linkTarget = pax.linkpath ?? longLink ?? cString(header.subarray(157, 257));
    longName = undefined;
    longLink = undefined;
    pax = {};
    const kind =
      type === '0' || type === '\0' || type === '7'
        ? 'file'
        : type === '5'
          ? 'directory'
          : type === '2'
            ? 'symlink'
            : type === '1'
              ? 'hardlink'
              : 'other';
    if (path === '') continue;
    entries.push({ path, kind, data: kind === 'file' ? data : Buffer.alloc(0), linkTarget });
  }
  return entries;
}

function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    // Layers never climb out of the root filesystem.
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end < 0 ? bytes.length : end).toString('utf8');
}

function octal(bytes: Buffer): number {
  // Large sizes use base-256: the high bit of the first byte is set.
  if (((bytes[0] ?? 0) & 0x80) !== 0) {
    let value = 0;
    for (let i = 1; i < bytes.length; i++) value = value * 256 + (bytes[i] ?? 0);
    return value;
  }
  const text = cString(bytes).trim();
  return text === '' ? 0 : parseInt(text, 8);
}

function checksumMatches(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < block; i++) sum += i >= 148 && i < 156 ? 32 : (header[i] ?? 0);
  return sum === octal(header.subarray(148, 156));
}

function parsePax(data: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space < 0) break;
    const length = parseInt(data.subarray(offset, space).toString('ascii'), 10);
    if (!Number.isFinite(length) || length <= 0) break;
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) records[record.slice(0, eq)] = record.slice(eq + 1);
    offset += length;
  }
  return records;
}

/** Writes a tar archive (ustar, pax names for long paths) of regular files: for tests and tools. */
export function writeTar(files: ReadonlyMap<string, Buffer | string>): Buffer {
  const parts: Buffer[] = [];
  for (const [path, content] of files) {
    const data = typeof content === 'string' ? Buffer.from(content) : content;
    if (Buffer.byteLength(path) > 100) {
      const record = paxRecord('path', path);
      parts.push(header(`PaxHeaders/${path.slice(-80)}`, record.length, 'x'), pad(record));
    }
    parts.push(header(path.slice(0, 100), data.length, '0'), pad(data));
  }
  parts.push(Buffer.alloc(block * 2));
  return Buffer.concat(parts);
}

function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  length += String(length).length;
  if (String(length).length !== String(length - String(length).length).length) length += 1;
  return Buffer.from(`${length}${body}`);
}

function header(name: string, size: number, type: string): Buffer {
  const h = Buffer.alloc(block);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write(type, 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

function pad(data: Buffer): Buffer {
  const rest = data.length % block;
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(block - rest)]);
}
