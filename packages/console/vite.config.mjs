// The console builds into the daemon's dist/, which the wardrik package ships
// and the daemon serves at `/` (packages/daemon/src/http/console-files.ts).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Relative asset URLs: the page also works behind a proxy that serves it under a path.
  base: "./",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../daemon/dist/console/", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // Inline nothing: the daemon's Content-Security-Policy allows only the page's own files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
