// The benchmarks' worker: a real worker process on the SDK serving `lookup` (read-only, answers at once).
import { z } from "zod";
import { Wardrik } from "@wardrik/sdk";

const wardrik = new Wardrik({ name: "bench-worker", onWarning: (m) => process.stderr.write(m + "\n") });
wardrik.tool({
  name: "lookup",
  description: "Look an ID up.",
  input: z.object({ id: z.string() }),
  readOnly: true,
  run: ({ id }) => ({ id, status: "ok" }),
});
process.on("SIGTERM", () => void wardrik.close().then(() => process.exit(0)));
// stdin is a lifeline: the worker exits when the benchmark that spawned it goes away.
process.stdin.on("end", () => process.exit(0)).resume();
await wardrik.listen();
