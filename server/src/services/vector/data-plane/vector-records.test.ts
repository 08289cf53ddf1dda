import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { VectorRecordSchema } from "../../../../../gen/platform/data/vector/v1/vector_data_service_pb.js";
import { MAX_METADATA_BYTES, MAX_UPSERT_VECTORS } from "./vector-limits.js";
import { vectorRows, vectorText } from "./vector-records.js";

function messageOf(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    const e = ConnectError.from(error);
    expect(e.code).toBe(Code.InvalidArgument);
    return e.rawMessage;
  }
  throw new Error("expected a failure");
}

const rows = (vectors: Parameters<typeof create<typeof VectorRecordSchema>>[1][]) =>
  vectorRows(
    vectors.map((init) => create(VectorRecordSchema, init)),
    2,
    "table t holds vectors of 2",
  );

describe("upsert checks", () => {
  it("binds pgvector's text form and the metadata as JSON", () => {
    expect(
      rows([
        { id: "a", values: [0.5, -2], metadata: { k: "v" } },
        { id: "b", values: [1, 2] },
      ]),
    ).toEqual([
      { id: "a", embedding: "[0.5,-2]", metadata: '{"k":"v"}' },
      { id: "b", embedding: "[1,2]", metadata: null },
    ]);
  });

  it("refuses empty and oversized batches", () => {
    expect(messageOf(() => rows([]))).toBe("vectors must hold at least one vector");
    const many = Array.from({ length: MAX_UPSERT_VECTORS + 1 }, (_, i) => ({ id: `v${i}`, values: [1, 2] }));
    expect(messageOf(() => rows(many))).toMatch(/^vectors holds 1001 vectors; at most 1000/);
  });

  it("names the field of a bad id, metadata or value", () => {
    expect(messageOf(() => rows([{ id: "", values: [1, 2] }]))).toBe("vectors[0].id is required");
    expect(messageOf(() => rows([{ id: "x".repeat(513), values: [1, 2] }]))).toMatch(/^vectors\[0\]\.id is longer/);
    expect(messageOf(() => rows([{ id: "a", values: [1, 2], metadata: { note: "a\u0000b" } }]))).toMatch(
      /^vectors\[0\]\.metadata must not hold/,
    );
    const big = { note: "x".repeat(MAX_METADATA_BYTES) };
    expect(messageOf(() => rows([{ id: "a", values: [1, 2], metadata: big }]))).toMatch(
      /^vectors\[0\]\.metadata is larger/,
    );
    expect(messageOf(() => rows([{ id: "a", values: [1, Infinity] }]))).toBe(
      "vectors[0].values[1] must be a finite 32-bit float",
    );
    expect(messageOf(() => vectorText([], 2, "vector", "r"))).toBe("vector must hold at least one value");
    expect(messageOf(() => vectorText(new Array(16_001).fill(1), 16_001, "vector", "r"))).toMatch(
      /at most 16000 are stored/,
    );
  });
});
