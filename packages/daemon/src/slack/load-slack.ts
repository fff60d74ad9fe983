import { loadOptionalModule } from "../optional-modules.js";
import type * as SlackStart from "./slack-start.js";

/** Slack's side of the daemon and Slack's Web API client: loaded only for a project whose config.yaml has `slack:`. */
export function loadSlack(): Promise<typeof SlackStart> {
  return loadOptionalModule("@slack/web-api", "slack: in config.yaml", () => import("./slack-start.js"));
}
