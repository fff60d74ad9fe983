import { describe, expect, it } from "vitest";
import { CallStops } from "../../src/runtime/call-stops.js";
import type { CallStop } from "../../src/tools/toolset.js";

/** A stop handle that writes down why it was stopped. */
function handle(): { abort(reason: CallStop): void; stopped: string[] } {
  const stopped: string[] = [];
  return { stopped, abort: (reason) => void stopped.push(reason.why) };
}

describe("the calls an agent runs, and the kills held for them", () => {
  it("a kill that arrives before the dispatch stops the call as soon as it is tracked, once", () => {
    const calls = new CallStops();
    calls.killNowOrAtDispatch("c1");
    const h = handle();
    const release = calls.track("c1", h);
    expect(h.stopped).toEqual(["killed"]);
    release();
    const again = handle();
    calls.track("c1", again);
    expect(again.stopped).toEqual([]);
  });

  it("kills a running call at once; a dropped held kill stops nothing; a release leaves a newer handle of the call alone", () => {
    const calls = new CallStops();
    expect(calls.kill("c1")).toBe(false);
    calls.holdKill("c1");
    calls.dropKill("c1");
    const first = handle();
    const releaseFirst = calls.track("c1", first);
    expect(first.stopped).toEqual([]);
    const second = handle();
    calls.track("c1", second);
    releaseFirst();
    expect(calls.has("c1")).toBe(true);
    expect(calls.kill("c1")).toBe(true);
    expect(second.stopped).toEqual(["killed"]);
    expect(calls.size).toBe(1);
  });
});
