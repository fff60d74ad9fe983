/** The OAuth callback (public, GET): 2 MB of nesting in its query. */
import { count, type HostileTally, type IsolationKind } from "../isolation-kit.js";

const query = `state=${"[".repeat(2_000_000)}`;

export const kind: IsolationKind = {
  name: "nested-oauth",
  hostile: "GET /v1/oauth/callback with 2 MB of nesting in the query",
  attack: async (d) => {
    const tally: HostileTally = {};
    try {
      const res = await fetch(`${d.url}/v1/oauth/callback?${query}`);
      await res.arrayBuffer();
      count(tally, `status_${res.status}`);
    } catch {
      count(tally, "error");
    }
    return tally;
  },
};
