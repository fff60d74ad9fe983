// A free TCP port on 127.0.0.1, shared by the e2e helpers, the fault kit, the MCP tests, the packaging tests and the benchmarks.
import { createServer, type AddressInfo } from "node:net";

/** Asks the OS for a free port and releases it; another process may take it first, so callers retry on EADDRINUSE. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
