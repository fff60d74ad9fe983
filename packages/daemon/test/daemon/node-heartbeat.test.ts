/**
 * A cluster node counts another alive (and its workers' tools usable) for one
 * lease after that node's last heartbeat: the node must beat several times a
 * lease, or a beat a little late hides its workers from the other nodes.
 */
import { describe, expect, it } from "vitest";
import { heartbeatMs } from "../../src/cluster/node-ownership.js";

describe("a node's heartbeat", () => {
  it("comes at least three times a lease, and every 2 s at most for long leases", () => {
    for (const lease of [0.3, 1, 2, 5, 6, 15, 30, 120]) {
      expect(heartbeatMs(lease) * 3, `lease ${lease} s`).toBeLessThanOrEqual(Math.max(300, lease * 1000));
      expect(heartbeatMs(lease)).toBeLessThanOrEqual(2000);
    }
    expect(heartbeatMs(30)).toBe(2000);
    expect(heartbeatMs(2)).toBe(666);
  });
});
