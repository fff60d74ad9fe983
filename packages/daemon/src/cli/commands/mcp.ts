import type { Command } from "commander";
import type { McpServerView } from "@wardrik/protocol";
import { connected } from "../connect-on-demand.js";
import type { DaemonClient } from "../daemon-client.js";
import { err, examples, json, out, setExitCode } from "../output.js";

interface OrgOption {
  org?: string;
  json?: boolean;
}

const ORG_HELP = "act for another org (admin token only)";
/** How often `mcp login` looks whether the browser has come back. */
const LOGIN_POLL_MS = 1000;

const AUTH_TEXT: Record<McpServerView["auth"], string> = {
  none: "-",
  header: "header",
  not_required: "not needed",
  unknown: "unknown",
  authorized: "logged in",
  login_needed: "login needed",
};

export function registerMcp(program: Command): void {
  const mcp = examples(
    program.command("mcp").description("MCP both ways: the servers agents use (and their OAuth logins), and agents offered as MCP tools"),
    "wardrik mcp ls",
    "wardrik mcp login linear",
    "wardrik mcp serve",
  );

  examples(
    mcp
      .command("ls")
      .option("--json", "print JSON")
      .option("--org <org>", ORG_HELP)
      .option("--no-connect", "answer from what the daemon knows; do not start servers to list their tools")
      .description("every MCP server of config.yaml: transport, state, tools, and whether it needs a login"),
    "wardrik mcp ls",
    "wardrik mcp ls --json --no-connect",
  ).action(async (opts: OrgOption & { connect: boolean }) => {
    const servers = await (await client(opts)).listMcpServers(opts.connect);
    if (opts.json) return json(servers);
    printServers(servers);
  });

  examples(
    mcp
      .command("login")
      .argument("<name>", "the server's name in config.yaml")
      .option("--no-browser", "only print the authorization URL (open it on any machine that reaches the daemon)")
      .option("--no-wait", "do not wait for the browser to come back")
      .option("--json", "print JSON")
      .option("--org <org>", ORG_HELP)
      .description(
        "log in to a remote MCP server with OAuth: prints the authorization URL, opens it, and waits until the daemon has the grant",
      ),
    "wardrik mcp login linear",
    "wardrik mcp login linear --no-browser",
  ).action(async (name: string, opts: OrgOption & { browser: boolean; wait: boolean }) => {
    const c = await client(opts);
    const started = await c.loginMcpServer(name);
    if (opts.json && !opts.wait) return json(started);
    if (!opts.json) {
      err(`To log in to MCP server ${name} for org ${started.org}, open this address in a browser:`);
      out(started.authorization_url);
    }
    const opened = opts.browser && (await (await import("../open-browser.js")).openInBrowser(started.authorization_url));
    if (opened && !opts.json) err("(opened in your browser)");
    if (!opts.wait) return;
    if (!opts.json) err(`Waiting for the browser to come back to ${started.redirect_url} (the link works until ${started.expires_at}) ...`);
    const end = await waitForLogin(c, name, Date.parse(started.expires_at));
    if (opts.json) json({ ...started, result: end.view });
    else if (end.ok) out(`Logged in: Wardrik can use MCP server ${name} for org ${started.org}.`);
    else err(`The login did not finish: ${end.why}`);
    setExitCode(end.ok ? 0 : 1);
  });

  examples(
    mcp
      .command("logout")
      .argument("<name>", "the server's name in config.yaml")
      .option("--json", "print JSON")
      .option("--org <org>", ORG_HELP)
      .description("remove the org's OAuth grant for a server (its tokens are revoked where the server allows it)"),
    "wardrik mcp logout linear",
  ).action(async (name: string, opts: OrgOption) => {
    const r = await (await client(opts)).logoutMcpServer(name);
    if (opts.json) return json(r);
    if (!r.removed) return out(`Org ${r.org} was not logged in to MCP server ${name}; nothing to remove.`);
    out(
      `Logged out of MCP server ${name} for org ${r.org}: the grant is removed${r.revoked ? " and its tokens are revoked" : "; the server did not revoke its tokens, which stay valid until they expire"}.`,
    );
  });

  examples(
    mcp
      .command("serve")
      .option("--org <org>", ORG_HELP)
      .description("offer the org's agents as MCP tools over stdio (for desktop clients); talks to the daemon's /v1/mcp"),
    "wardrik mcp serve",
    "WARDRIK_URL=http://127.0.0.1:7373 WARDRIK_TOKEN=wdk_... wardrik mcp serve",
  ).action(async (opts: { org?: string }) => {
    const c = await connected();
    // Loaded here: the MCP SDK is only needed by this command (the daemon's start pays for every command's imports).
    const { serveStdioProxy } = await import("../mcp-stdio-proxy.js");
    await serveStdioProxy({ url: c.url, token: c.token ?? "", ...(opts.org ? { org: opts.org } : {}), note: err });
  });
}

async function client(opts: OrgOption): Promise<DaemonClient> {
  return (await connected()).inOrg(opts.org);
}

async function waitForLogin(c: DaemonClient, name: string, expiresAt: number): Promise<{ ok: boolean; why: string; view?: McpServerView }> {
  for (;;) {
    await new Promise((r) => setTimeout(r, LOGIN_POLL_MS));
    const view = await c.getMcpServer(name);
    if (view.login?.pending !== true) {
      if (view.login?.error) return { ok: false, why: view.login.error, view };
      if (view.auth === "authorized") return { ok: true, why: "", view };
      return { ok: false, why: "the login was replaced or removed meanwhile", view };
    }
    if (Date.now() > expiresAt) return { ok: false, why: `the link expired; run wardrik mcp login ${name} again`, view };
  }
}

function printServers(servers: McpServerView[]): void {
  if (servers.length === 0) return out("No MCP servers: config.yaml has no mcp: entries.");
  const rows = [
    ["NAME", "TRANSPORT", "STATE", "AUTH", "TOOLS"],
    ...servers.map((s) => [
      s.name,
      `${s.transport} ${s.target}`,
      s.status === "login_needed" ? "login needed" : s.status,
      AUTH_TEXT[s.auth],
      s.tools.length > 0 ? s.tools.join(", ") : "-",
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) out(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
  for (const s of servers) if (s.reason && s.status !== "up" && s.status !== "stopped") out(`${s.name}: ${s.reason}`);
}
