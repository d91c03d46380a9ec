/**
 * Just enough of the protobuf wire format to write an ONNX ModelProto: no Python `onnx` package is
 * reachable here and the test suite should not depend on a transitive copy of protobufjs.
 */
export class ProtobufWriter {
  private readonly chunks: Uint8Array[] = [];

  /** Wire type 0. int64 fields take negatives as ten-byte two's complement, hence the BigInt path. */
  varint(field: number, value: number | bigint): this {
    this.key(field, 0);
    this.push(encodeVarint(value));
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, 2);
    this.push(encodeVarint(value.length));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (writer: ProtobufWriter) => void): this {
    const inner = new ProtobufWriter();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  /** Repeated scalar numeric fields are packed by default in proto3, which ONNX readers expect. */
  packedVarints(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtobufWriter();
    for (const v of values) inner.push(encodeVarint(v));
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    const total = this.chunks.reduce((n, c) => n + c.length, 0);
    const out = new Uint8Array(total);
    let offset = 0;
    for (const c of this.chunks) {
      out.set(c, offset);
      offset += c.length;
    }
    return out;
  }

  private key(field: number, wireType: number): void {
    this.push(encodeVarint(field * 8 + wireType));
  }

  private push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
  }
}

function encodeVarint(value: number | bigint): Uint8Array {
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return Uint8Array.from(bytes);
}
