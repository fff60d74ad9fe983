/**
 * A protobuf writer for the OTLP messages Wardrik sends, writing into one
 * growing buffer outside the JavaScript heap: strings with Node's native
 * UTF-8 encoder, IDs with its hex decoder, and a message's length written
 * after its content (one byte is reserved; the rare longer message moves its
 * bytes over by the difference). The garbage collector never sees a span's
 * encoding, and nothing is estimated in a first pass.
 */

const TWO_32 = 2 ** 32;

export class ProtobufWriter {
  buf: Buffer;
  pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** The bytes written so far (a view: valid until the next write). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** Forgets what was written; the buffer is kept for the next use. */
  reset(): void {
    this.pos = 0;
  }

  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const bigger = Buffer.allocUnsafeSlow(size);
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** A field's key: its number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** A non-negative integer below 2^53. */
  varint(value: number): void {
    this.ensure(10);
    const b = this.buf;
    while (value >= 0x80) {
      b[this.pos++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    b[this.pos++] = value;
  }

  /** A signed 64-bit integer as protobuf's int64 (a negative one takes ten bytes). */
  int64(value: number): void {
    if (value >= 0) return this.varint(value);
    let v = BigInt.asUintN(64, BigInt(value));
    this.ensure(10);
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  double(value: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** Epoch milliseconds (fractional) as fixed64 nanoseconds, exactly, without BigInt. */
  unixNanos(ms: number): void {
    let seconds = Math.floor(ms / 1000);
    let nanos = Math.round((ms - seconds * 1000) * 1e6);
    if (nanos >= 1e9) {
      seconds += 1;
      nanos -= 1e9;
    }
    // seconds * 1e9 + nanos overflows 2^53: split seconds in 16-bit halves so every product stays exact.
    const high16 = Math.floor(seconds / 65536);
    const low = (seconds % 65536) * 1e9 + nanos; // < 2^47
    const mid = high16 * 1e9; // the part to shift left by 16 bits, < 2^46
    const z = (mid % 65536) * 65536 + low; // < 2^49
    const lo = z % TWO_32;
    const hi = Math.floor(mid / 65536) + Math.floor(z / TWO_32);
    this.ensure(8);
    this.buf.writeUInt32LE(lo, this.pos);
    this.buf.writeUInt32LE(hi >>> 0, this.pos + 4);
    this.pos += 8;
  }

  /** A length-delimited string (UTF-8). */
  string(value: string): void {
    const n = value.length;
    if (n < 0x80) {
      // Attribute keys, IDs, names: short and ASCII, copied here faster than a call into the native encoder.
      this.ensure(n + 1);
      const b = this.buf;
      const start = this.pos;
      b[start] = n;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        b[start + 1 + i] = c;
      }
      if (i === n) {
        this.pos = start + 1 + n;
        return;
      }
    }
    const start = this.begin();
    this.ensure(n * 3);
    this.pos += this.buf.write(value, this.pos, "utf8");
    this.end(start);
  }

  /** A length-delimited field of bytes given in (lower- or upper-case) hex: trace and span IDs. */
  hexBytes(hex: string): void {
    const n = hex.length >> 1;
    this.varint(n);
    this.ensure(n);
    const b = this.buf;
    for (let i = 0; i < n; i++) b[this.pos + i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
    this.pos += n;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Starts a length-delimited message (after its tag): returns the mark `end` takes. */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Ends the message begun at `start`: writes its length before it. */
  end(start: number): void {
    const len = this.pos - start - 1;
    if (len < 0x80) {
      this.buf[start] = len;
      return;
    }
    const extra = varintSize(len) - 1;
    this.ensure(extra);
    this.buf.copyWithin(start + 1 + extra, start + 1, this.pos);
    this.pos = start;
    this.varint(len);
    this.pos += len;
  }
}

/** The value of one hex digit's character code (IDs are hex: made here, or checked when a traceparent is parsed). */
function nibble(c: number): number {
  if (c <= 0x39) return c - 0x30;
  return (c | 0x20) - 0x57;
}

export function varintSize(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    n++;
  }
  return n;
}
