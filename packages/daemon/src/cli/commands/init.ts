import type { Command } from "commander";
import { examples, json, out } from "../output.js";

export function registerInit(program: Command): void {
  examples(
    program
      .command("init")
      .argument("<dir>", "directory to create the project in")
      .option("--sdk-from <dir>", "a folder with the tarballs of npm run pack (wardrik-sdk-*.tgz, wardrik-protocol-*.tgz) for the worker")
      .option("--json", "print JSON")
      .description("create a project: config.yaml, an example agent, a policy, a worker file, an admin token"),
    "wardrik init demo && cd demo && wardrik daemon",
    "wardrik init demo --sdk-from ~/wardrik/dist   # the worker's SDK from those tarballs",
  ).action(async (dir: string, opts: { json?: boolean; sdkFrom?: string }) => {
    const [{ initProject, VENDOR_DIR }, { checkoutRoot, findSdkTarballs, tarballNames }] = await Promise.all([
      import("../init-project.js"),
      import("../sdk-tarballs.js"),
    ]);
    const { dir: where, files, sdk } = initProject(dir, { sdk: findSdkTarballs(opts.sdkFrom) });
    if (opts.json) return json({ dir: where, files, sdk });
    out(`Created a Wardrik project in ${where}:`);
    for (const f of files) out(`  ${f}`);
    out(`\nNext: cd ${dir} && wardrik daemon, then in another terminal: wardrik ask helper "Hello"`);
    if (sdk === "vendored") {
      out(
        `Worker tools: npm install && npm run worker (the SDK installs from ${VENDOR_DIR}/), then: wardrik ask helper "Refund order ord_1234"`,
      );
      return;
    }
    // The packages are not on the npm registry: say exactly where the SDK comes from.
    const names = tarballNames();
    const checkout = checkoutRoot();
    const dist = checkout ? `${checkout}/dist` : "DIST";
    const pack = checkout ? `(cd ${checkout} && npm run pack) && ` : "";
    out(`Worker tools: @wardrik/sdk is not on the npm registry; install it from the tarballs of npm run pack, then start the worker:`);
    out(`  ${pack}npm install ${dist}/${names.protocol} ${dist}/${names.sdk} && npm run worker`);
    if (!checkout) out(`  (DIST: the dist/ folder of the Wardrik checkout where npm run pack ran)`);
    out(`then: wardrik ask helper "Refund order ord_1234"`);
  });
}
