/** The closing summary .ci/run prints (test/file-times-reporter.ts). */
import { expect, it } from "vitest";
import { formatFileTimes, type FileTime } from "../file-times-reporter.js";

const file = (project: string, n: number, ms: number, from: number, tests = 1): FileTime => ({
  project,
  file: `test/f${n}.test.ts`,
  ms,
  importMs: 0,
  testsMs: ms,
  tests,
  from,
  to: from + ms,
});

it("names the 20 slowest files, slowest first, then each project's wall time and the run's total", () => {
  const times = Array.from({ length: 25 }, (_, i) => file(i % 2 === 0 ? "unit" : "sqlite", i, (i + 1) * 1000, i * 100, 2));
  const text = formatFileTimes(times, 61_000);
  const listed = [...text.matchAll(/^ +([\d.]+) s {2}\[(\w+)\] +(\S+)$/gm)].map((m) => m[3]);
  expect(listed).toHaveLength(20);
  expect(listed[0]).toBe("test/f24.test.ts");
  expect(listed[19]).toBe("test/f5.test.ts");
  // unit: files 0, 2, ..., 24 from 0 ms to 2400 + 25000 ms.
  expect(text).toMatch(/^ +27\.4 s {2}unit +13 files, 26 tests$/m);
  expect(text).toMatch(/^ +26\.2 s {2}sqlite +12 files, 24 tests$/m);
  expect(text).toMatch(/^Total: 61\.0 s for 25 files, 50 tests\.$/m);
});
