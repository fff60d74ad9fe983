/**
 * The daemon is a list of named services, started in order and stopped in
 * reverse: the runner on its own (what it promises any list), then the
 * daemon's own list, as its shutdown lines show on a real daemon.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init-project.js";
import { startDaemon } from "../../src/daemon.js";
import { startServices, type Service } from "../../src/service-list.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** Services that write down what happens to them; `failing` throws on start. */
function recorded(names: string[], failing?: string): { services: Service[]; seen: string[] } {
  const seen: string[] = [];
  const services = names.map((name): Service => ({
    name,
    start: async () => {
      await Promise.resolve();
      if (name === failing) throw new Error(`${name} cannot start`);
      seen.push(`start ${name}`);
    },
    stop: () => void seen.push(`stop ${name}`),
  }));
  return { services, seen };
}

describe("the service list", () => {
  it("starts in the list's order and stops in reverse, once however often stop is called", async () => {
    const { services, seen } = recorded(["a", "b", "c"]);
    const running = await startServices(services);
    expect(seen).toEqual(["start a", "start b", "start c"]);
    await Promise.all([running.stop(), running.stop()]);
    await running.stop();
    expect(seen).toEqual(["start a", "start b", "start c", "stop c", "stop b", "stop a"]);
  });

  it("a service that fails to start stops, then those started before it, in reverse; the rest never start", async () => {
    const { services, seen } = recorded(["a", "b", "c", "d"], "c");
    await expect(startServices(services)).rejects.toThrow("c cannot start");
    expect(seen).toEqual(["start a", "start b", "stop c", "stop b", "stop a"]);
  });

  it("a stop that fails is reported, and the services after it in the stop order still stop", async () => {
    const { services, seen } = recorded(["a", "b", "c"]);
    services[1] = { ...services[1]!, stop: () => Promise.reject(new Error("b is stuck")) };
    const failed: string[] = [];
    const stopped: string[] = [];
    const running = await startServices(services, {
      stopFailed: (name, err) => failed.push(`${name}: ${(err as Error).message}`),
      stopped: (name) => stopped.push(name),
    });
    await running.stop();
    expect(failed).toEqual(["b: b is stuck"]);
    expect(stopped).toEqual(["c", "b", "a"]);
    expect(seen.filter((s) => s.startsWith("stop"))).toEqual(["stop c", "stop a"]);
  });
});

describe("the daemon's services", () => {
  function project(): { dir: string; lines: string[]; log: (level: string, msg: string) => void } {
    const base = mkdtempSync(join(tmpdir(), "wardrik-services-"));
    cleanup.push(() => rmSync(base, { recursive: true, force: true }));
    const dir = join(base, "p");
    initProject(dir);
    const lines: string[] = [];
    return { dir, lines, log: (_level, msg) => void lines.push(msg) };
  }
  const stoppedOf = (lines: string[]) => lines.flatMap((l) => /^shutdown: (\S+) stopped$/.exec(l)?.[1] ?? []);

  it("stop in reverse of their start: first no new requests, turns before workers, the database last", async () => {
    const { dir, lines, log } = project();
    const d = await startDaemon(dir, { port: 0, log });
    await d.close();
    expect(stoppedOf(lines)).toEqual([
      "intake",
      "events",
      "turns",
      "slack",
      "workers",
      "mcp",
      "http",
      "agents",
      "telemetry",
      "database",
      "module-log",
    ]);
    const said = (text: string) => lines.indexOf(text);
    expect(said("shutdown: no new requests")).toBeGreaterThan(-1);
    expect(said("shutdown: no new requests")).toBeLessThan(said("shutdown: stopping turns at a safe point"));
    expect(said("shutdown: stopping turns at a safe point")).toBeLessThan(said("shutdown: telling workers the daemon is going away"));
    expect(lines.at(-1)).toBe("shutdown: done");
  });

  it("when the API's port is taken, the services already started stop in reverse and the database is given back", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    // The daemon asks what answers there (to say whether it is a Wardrik daemon): that connection closes too.
    cleanup.push(() => new Promise<void>((r) => (taken.close(() => r()), taken.closeAllConnections())));
    const port = (taken.address() as { port: number }).port;
    const { dir, lines, log } = project();
    await expect(startDaemon(dir, { port, host: "127.0.0.1", log })).rejects.toThrow();
    expect(stoppedOf(lines)).toEqual(["http", "agents", "telemetry", "database", "module-log"]);
    // The lock went with the database: the same project starts on another port.
    const d = await startDaemon(dir, { port: 0, log: () => undefined });
    await d.close();
  });
});
