/**
 * The base score of a CVSS v3.0 or v3.1 vector (`CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H`),
 * with the specification's weights and its round-up rule; undefined when a base metric is missing
 * or invalid.
 */
export function cvss3BaseScore(vector: string): number | undefined {
  const parts = vector.trim().split("/");
  if (!/^CVSS:3\.[01]$/.test(parts[0] ?? "")) return undefined;
  const metrics = new Map(parts.slice(1).map((p) => p.split(":") as [string, string]));
  const scopeChanged = metrics.get("S") === "C";
  if (!scopeChanged && metrics.get("S") !== "U") return undefined;
  const av = pick(metrics.get("AV"), { N: 0.85, A: 0.62, L: 0.55, P: 0.2 });
  const ac = pick(metrics.get("AC"), { L: 0.77, H: 0.44 });
  const pr = pick(metrics.get("PR"), scopeChanged ? { N: 0.85, L: 0.68, H: 0.5 } : { N: 0.85, L: 0.62, H: 0.27 });
  const ui = pick(metrics.get("UI"), { N: 0.85, R: 0.62 });
  const impact = { H: 0.56, L: 0.22, N: 0 };
  const c = pick(metrics.get("C"), impact);
  const i = pick(metrics.get("I"), impact);
  const a = pick(metrics.get("A"), impact);
  if ([av, ac, pr, ui, c, i, a].some((v) => v === undefined)) return undefined;
  const iss = 1 - (1 - c!) * (1 - i!) * (1 - a!);
  const impactScore = scopeChanged ? 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02) ** 15 : 6.42 * iss;
  if (impactScore <= 0) return 0;
  const exploitability = 8.22 * av! * ac! * pr! * ui!;
  const raw = scopeChanged ? 1.08 * (impactScore + exploitability) : impactScore + exploitability;
  return roundUp(Math.min(raw, 10));
}

function pick(value: string | undefined, weights: Record<string, number>): number | undefined {
  return value === undefined ? undefined : weights[value];
}

/** CVSS 3.1's Roundup: the smallest one-decimal number not below `value`, free of float noise. */
function roundUp(value: number): number {
  const scaled = Math.round(value * 100_000);
  return scaled % 10_000 === 0 ? scaled / 100_000 : (Math.floor(scaled / 10_000) + 1) / 10;
}
