/**
 * A vitest reporter that says where the run's time went: at the end it prints
 * the slowest test files (time from queued to done, as the fork saw it:
 * setup, import, hooks and tests), each project's wall time, and the run's
 * total; with WARDRIK_FILE_TIMES=PATH it also writes every file's times there
 * as JSON. `.ci/run` uses it; so can anyone: `npx vitest run --reporter=default
 * --reporter=./test/file-times-reporter.ts`.
 */
import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

/** How many files the closing list names. */
const SLOWEST = 20;

export interface FileTime {
  project: string;
  file: string;
  /** setup + import + tests and hooks, in ms. */
  ms: number;
  /** Importing the file and what it imports (collect), in ms. */
  importMs: number;
  /** Tests and hooks, in ms. */
  testsMs: number;
  tests: number;
  /** When the fork started on the file and finished with it (ms since the run began). */
  from: number;
  to: number;
}

export default class FileTimesReporter implements Reporter {
  private runStart = Date.now();
  private readonly started = new Map<string, number>();
  private readonly times: FileTime[] = [];

  onTestRunStart(): void {
    this.runStart = Date.now();
  }

  onTestModuleStart(module: TestModule): void {
    this.started.set(key(module), Date.now() - this.runStart);
  }

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    const to = Date.now() - this.runStart;
    const ms = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
    this.times.push({
      project: module.project.name,
      file: module.relativeModuleId,
      ms: Math.round(ms),
      importMs: Math.round(d.collectDuration),
      testsMs: Math.round(d.duration),
      tests: [...module.children.allTests()].length,
      from: this.started.get(key(module)) ?? Math.max(0, to - ms),
      to,
    });
  }

  onTestRunEnd(): void {
    const totalMs = Date.now() - this.runStart;
    process.stdout.write(formatFileTimes(this.times, totalMs));
    const path = process.env.WARDRIK_FILE_TIMES;
    if (path) writeFileSync(path, `${JSON.stringify({ totalMs, files: this.times }, null, 1)}\n`);
  }
}

/** The closing summary: the slowest files, each project's wall time, files and tests, and the run's total. */
export function formatFileTimes(times: FileTime[], totalMs: number): string {
  const lines: string[] = [];
  const slowest = [...times].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  lines.push("", `The ${slowest.length} slowest test files (setup + import + tests, in the fork):`);
  for (const t of slowest) lines.push(`  ${seconds(t.ms).padStart(7)}  ${`[${t.project}]`.padEnd(16)} ${t.file}`);
  lines.push("", "Projects (wall time from the first file's start to the last file's end; files; tests):");
  for (const [project, files] of groupBy(times, (t) => t.project)) {
    const wall = Math.max(...files.map((f) => f.to)) - Math.min(...files.map((f) => f.from));
    const tests = files.reduce((n, f) => n + f.tests, 0);
    lines.push(`  ${seconds(wall).padStart(7)}  ${project.padEnd(16)} ${files.length} files, ${tests} tests`);
  }
  const tests = times.reduce((n, f) => n + f.tests, 0);
  lines.push("", `Total: ${seconds(totalMs)} for ${times.length} files, ${tests} tests.`, "");
  return lines.join("\n");
}

function key(module: TestModule): string {
  return `${module.project.name}\0${module.moduleId}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function groupBy<T>(items: T[], by: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(by(item), [...(groups.get(by(item)) ?? []), item]);
  return groups;
}
