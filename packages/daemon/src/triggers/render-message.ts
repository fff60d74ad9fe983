/**
 * A trigger's message template: `{{field.path}}` is replaced by that value of
 * the trigger's data (an inbound webhook's JSON body, the CloudEvent of an
 * event trigger, the time of a schedule). A string goes in as it is, another
 * value as JSON, and a path that leads nowhere as nothing.
 */
export function renderMessage(template: string, data: unknown): string {
  return template.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (_whole, path: string) => {
    const value = lookup(data, path);
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

function lookup(data: unknown, path: string): unknown {
  let at: unknown = data;
  for (const part of path.split(".")) {
    if (typeof at !== "object" || at === null || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}
