import { spawn } from "node:child_process";

/**
 * Opens `url` in the desktop's browser, when there is a desktop: macOS and
 * Windows always have one; elsewhere a graphical session sets DISPLAY or
 * WAYLAND_DISPLAY (over SSH or on a server there is none, and the link is
 * only printed). Resolves to whether a browser was asked to open it.
 */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const command =
    process.platform === "darwin"
      ? ["open", url]
      : process.platform === "win32"
        ? // `start` would read & in the URL as a command separator.
          ["rundll32", "url.dll,FileProtocolHandler", url]
        : env.DISPLAY || env.WAYLAND_DISPLAY
          ? ["xdg-open", url]
          : undefined;
  if (!command) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: "ignore", detached: true, env });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}
