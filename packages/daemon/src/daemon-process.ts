/**
 * What `wardrik daemon` loads to run a daemon: one entry, so the bundle builds
 * it into one CommonJS file (dist/bundle/daemon.cjs, scripts/bundle-daemon.mjs)
 * that the command line requires.
 */
export { startDaemon } from "./daemon.js";
export { runUntilSignalled } from "./daemon-signals.js";
export { createLogger, routeProcessOutput } from "./log/index.js";
