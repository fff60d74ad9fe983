import { useEffect, useState } from "preact/hooks";

/** Pages live in the URL's fragment: the daemon serves one page at `/`, and links to an agent or a turn still work. */
export type Route = { page: "agents" } | { page: "agent"; id: string; tab: AgentTab; run?: string } | { page: "not-found"; path: string };
export type AgentTab = "conversation" | "turns" | "events" | "configuration";

const TABS: readonly AgentTab[] = ["conversation", "turns", "events", "configuration"];

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/";
  if (path === "/" || path === "/agents") return { page: "agents" };
  const turn = /^\/agents\/([A-Za-z0-9_]+)\/turns\/([A-Za-z0-9_]+)$/.exec(path);
  if (turn) return { page: "agent", id: turn[1]!, tab: "turns", run: turn[2]! };
  const m = /^\/agents\/([A-Za-z0-9_]+)(?:\/([a-z]+))?$/.exec(path);
  if (m) {
    const tab = (TABS as readonly string[]).includes(m[2] ?? "") ? (m[2] as AgentTab) : "conversation";
    return { page: "agent", id: m[1]!, tab };
  }
  return { page: "not-found", path };
}

export function agentHref(id: string, tab: AgentTab = "conversation"): string {
  return tab === "conversation" ? `#/agents/${id}` : `#/agents/${id}/${tab}`;
}

/** One turn's timeline. */
export function turnHref(agentId: string, run: string): string {
  return `#/agents/${agentId}/turns/${run}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
