/** No hostile input: the prober's latencies with nothing else going on, to compare the other kinds with. */
import type { IsolationKind } from "../isolation-kit.js";

export const kind: IsolationKind = {
  name: "idle",
  hostile: "nothing (the baseline)",
  attack: async () => {
    await new Promise((r) => setTimeout(r, 500));
    return {};
  },
};
