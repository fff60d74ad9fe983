import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_JSON_DEPTH, tooDeep, valueTooDeep } from "@wardrik/protocol";
import type { ToolOutcome } from "../toolset.js";

/** How a non-text content block reaches the model: described, never dropped. */
export type Attachment =
  | { type: "image" | "audio"; mime_type: string; bytes: number; note: string }
  | { type: "resource"; uri: string; mime_type?: string; text: string }
  | { type: "resource"; uri: string; mime_type?: string; bytes: number; note: string }
  | { type: "resource_link"; uri: string; name: string; title?: string; description?: string; mime_type?: string; bytes?: number };

const BINARY_NOTE = "binary content; the model is given this description, not the data";

/**
 * Turns an MCP `tools/call` result into a tool outcome:
 * - text blocks are joined with newlines;
 * - `structuredContent` is passed on as `structured`; the text is kept only when it says
 *   more (servers also send structured results as text, for older clients);
 * - images, audio and resources become attachments that describe them (type, MIME type, size, URI);
 * - `isError: true` fails the call with the server's text.
 * A result that is only text is passed on as that string. A result nested
 * deeper than `maxDepth` (config.yaml `limits.json_depth`) fails the call: the
 * server's answer is outside input, and what reads it next (serialising,
 * redaction, storage) would walk it.
 */
export function toToolOutcome(server: string, tool: string, result: CallToolResult, maxDepth = DEFAULT_JSON_DEPTH): ToolOutcome {
  if (valueTooDeep(result, maxDepth))
    return { ok: false, kind: "failed", error: tooDeep(`The result of ${server}/${tool}`, maxDepth).message };
  const texts: string[] = [];
  const attachments: Attachment[] = [];
  for (const block of result.content ?? []) {
    if (block.type === "text") texts.push(block.text);
    else attachments.push(describe(block));
  }
  const text = texts.join("\n");
  const structured = result.structuredContent;

  if (result.isError === true) {
    let error = text || (structured ? JSON.stringify(structured) : `The MCP tool ${server}/${tool} reported an error without a message.`);
    if (attachments.length > 0) error += `\n(with ${attachments.length} attachment(s): ${attachments.map(summary).join("; ")})`;
    return { ok: false, kind: "failed", error };
  }
  if (structured === undefined && attachments.length === 0) return { ok: true, output: text };
  const output: { text?: string; structured?: Record<string, unknown>; attachments?: Attachment[] } = {};
  if (text && !(structured !== undefined && repeats(texts, structured))) output.text = text;
  if (structured !== undefined) output.structured = structured;
  if (attachments.length > 0) output.attachments = attachments;
  return { ok: true, output };
}

function describe(block: Exclude<ContentBlock, { type: "text" }>): Attachment {
  switch (block.type) {
    case "image":
    case "audio":
      return { type: block.type, mime_type: block.mimeType, bytes: base64Bytes(block.data), note: BINARY_NOTE };
    case "resource": {
      const r = block.resource;
      const mime = r.mimeType ? { mime_type: r.mimeType } : {};
      if ("text" in r && typeof r.text === "string") return { type: "resource", uri: r.uri, ...mime, text: r.text };
      const blob = "blob" in r && typeof r.blob === "string" ? r.blob : "";
      return { type: "resource", uri: r.uri, ...mime, bytes: base64Bytes(blob), note: BINARY_NOTE };
    }
    case "resource_link":
      return {
        type: "resource_link",
        uri: block.uri,
        name: block.name,
        ...(block.title ? { title: block.title } : {}),
        ...(block.description ? { description: block.description } : {}),
        ...(block.mimeType ? { mime_type: block.mimeType } : {}),
        ...(block.size !== undefined ? { bytes: block.size } : {}),
      };
    default: {
      // A content type newer than this SDK: say so rather than drop it.
      const unknown = block as { type?: unknown };
      return { type: "resource", uri: "", bytes: 0, note: `unsupported content type "${String(unknown.type)}"` };
    }
  }
}

function summary(a: Attachment): string {
  return "uri" in a ? `${a.type} ${a.uri}` : `${a.type} ${a.mime_type}, ${a.bytes} bytes`;
}

/** Decoded size of base64 data, without decoding it. */
export function base64Bytes(data: string): number {
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** Whether the text blocks only repeat the structured result: its JSON, or strings found in it. */
function repeats(texts: string[], structured: Record<string, unknown>): boolean {
  const strings = new Set<string>();
  const collect = (v: unknown, depth: number): void => {
    if (typeof v === "string") strings.add(v);
    else if (v && typeof v === "object" && depth < 8) for (const x of Object.values(v)) collect(x, depth + 1);
  };
  collect(structured, 0);
  const json = JSON.stringify(structured);
  return texts.every((t) => strings.has(t) || sameJson(t, json));
}

function sameJson(text: string, json: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === json;
  } catch {
    return false;
  }
}
