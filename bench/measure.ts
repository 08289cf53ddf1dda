/** Runs `fn` in timed batches after a warm-up and reports the median time per call. */
export function measure(
  name: string,
  fn: () => unknown,
  { batch = 2_000, rounds = 15 } = {},
): { name: string; nsPerOp: number } {
  for (let i = 0; i < batch; i++) fn();
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    samples.push(Number(process.hrtime.bigint() - start) / batch);
  }
  samples.sort((a, b) => a - b);
  return { name, nsPerOp: samples[Math.floor(samples.length / 2)]! };
}

export async function measureAsync(name: string, fn: () => Promise<unknown>, { batch = 500, rounds = 15 } = {}) {
  for (let i = 0; i < batch; i++) await fn();
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) await fn();
    samples.push(Number(process.hrtime.bigint() - start) / batch);
  }
  samples.sort((a, b) => a - b);
  return { name, nsPerOp: samples[Math.floor(samples.length / 2)]! };
}

export function formatNs(ns: number): string {
  return ns >= 1_000_000
    ? `${(ns / 1_000_000).toFixed(2)} ms`
    : ns >= 1_000
      ? `${(ns / 1_000).toFixed(2)} µs`
      : `${ns.toFixed(0)} ns`;
}
