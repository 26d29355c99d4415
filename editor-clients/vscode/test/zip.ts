// Reads a .zip (a .vsix) without dependencies: the central directory, and stored or deflated entries.
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

export interface Entry {
  name: string;
  size: number; // uncompressed bytes
  read: () => Buffer;
}

/** The entries of a zip file, in the order of its central directory. */
export function entries(file: string): Entry[] {
  const zip = readFileSync(file);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06])); // end of central directory
  if (end < 0) {
    throw new Error(`${file} is not a zip file`);
  }
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const found: Entry[] = [];
  for (let index = 0; index < count; index += 1) {
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const [nameLength, extraLength, commentLength] = [28, 30, 32].map((offset) => zip.readUInt16LE(at + offset));
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const read = () => {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      return method === 8 ? inflateRawSync(data) : data;
    };
    found.push({ name, size, read });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return found;
}
