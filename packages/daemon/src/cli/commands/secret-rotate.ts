import type { Command } from "commander";
import { findProjectDir } from "../project-dir.js";

/**
 * `wardrik secret rotate-key`: re-encrypts every stored secret under a new
 * key. It works on the project's database and key file directly (it runs in
 * the project directory, with or without a running daemon, which picks the
 * new key up by itself).
 */
export function registerSecretRotate(secret: Command): void {
  secret
    .command("rotate-key")
    .description("re-encrypt every secret under a new key; old keys stay readable until it is done, then leave the key file")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      `
Examples:
  wardrik secret rotate-key                      a new key in .wardrik/secret-key
  WARDRIK_SECRET_KEY=$(openssl rand -base64 32) WARDRIK_SECRET_KEY_PREVIOUS=<old key> wardrik secret rotate-key
                                                 move every secret to the key in WARDRIK_SECRET_KEY`,
    )
    .action(async (opts: { json?: boolean }) => {
      const dir = findProjectDir(process.cwd());
      if (!dir)
        throw new Error(
          "Not inside a Wardrik project (no config.yaml here or above): run wardrik secret rotate-key in the project directory.",
        );
      // Loaded here so other commands start without the store's dependencies.
      const [{ rotateSecretKey }, { SECRET_KEY_ENV }] = await Promise.all([
        import("../../secrets/rotate-key.js"),
        import("../../secrets/key-ring.js"),
      ]);
      const r = await rotateSecretKey(dir);
      if (opts.json) process.stdout.write(JSON.stringify(r) + "\n");
      else {
        const lines = [`Re-encrypted ${r.rotated} secret${r.rotated === 1 ? "" : "s"} under key ${r.keyId} (${r.source}).`];
        if (r.retired.length > 0)
          lines.push(`Removed the old key${r.retired.length === 1 ? "" : "s"} ${r.retired.join(", ")} from the key file.`);
        else if (r.failed.length === 0 && r.source === SECRET_KEY_ENV)
          lines.push("Once every daemon runs with this key, remove the old ones from WARDRIK_SECRET_KEY_PREVIOUS and .wardrik/secret-key.");
        for (const f of r.failed) lines.push(`Could not re-encrypt ${f.org}/${f.name}: ${f.error}`);
        if (r.failed.length > 0) lines.push("The old keys stay in the key file until every secret can be re-encrypted.");
        process.stdout.write(lines.join("\n") + "\n");
      }
      if (r.failed.length > 0) process.exitCode = 1;
    });
}
