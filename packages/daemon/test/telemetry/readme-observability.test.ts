/**
 * The README's Observability section stays true: its config.yaml examples
 * are valid `telemetry:` blocks, and its table has one example query for
 * each metric family the daemon serves, and names no other.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { telemetrySchema } from "../../src/config/integration-schemas.js";
import { WardrikMetrics } from "../../src/metrics/wardrik-metrics.js";
import { parsePrometheusText } from "../helpers/prometheus-text.js";

const readme = readFileSync(new URL("../../../../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("## Observability"), readme.indexOf("\n## ", readme.indexOf("## Observability") + 1));

describe("README: Observability", () => {
  it("shows telemetry blocks that config.yaml accepts", () => {
    const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => parse(m[1]!) as Record<string, unknown>)
      .filter((y) => "telemetry" in y);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const b of blocks) expect(telemetrySchema.safeParse(b.telemetry).error).toBeUndefined();
  });

  it("has one example query for each metric family GET /metrics serves", async () => {
    const served = [...parsePrometheusText(await new WardrikMetrics().render()).keys()].filter((n) => n !== "wardrik_build_info");
    const rows = [...section.matchAll(/^\| `(wardrik_[a-z_]+)[{`]/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(served.sort());
    for (const name of served) {
      const row = section.split("\n").find((l) => l.startsWith(`| \`${name}`))!;
      // The query uses the family (a histogram through its buckets).
      expect(row.split("|")[2]).toContain(name);
    }
  });
});
