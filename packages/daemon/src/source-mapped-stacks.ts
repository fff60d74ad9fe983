/**
 * Stack traces that name the original sources (src/*.ts, through the bundle's
 * source maps), as Node's own `process.setSourceMapsEnabled(true)` gives them,
 * with each map read when a stack first needs it instead of when its file
 * loads. Node 20 reads and parses every map as its module loads and counts the
 * length of every line of the bundle (for coverage): about 65 ms of CPU at each
 * daemon start, for stack traces a healthy daemon never writes.
 *
 * The frames are written as Node 20 writes them with source maps on
 * (lib/internal/source_map/prepare_stack_trace.js): `at NAME (SOURCE:LINE:COLUMN)`,
 * the name the map gives the enclosing function when the bundler renamed it;
 * a frame of a file without a map stays as V8 writes it. What Node adds to a
 * crash's report (the original source line under the message) is not: the
 * daemon logs a crash through its logger, which has the stack alone.
 */
import { readFileSync } from "node:fs";
import * as nodeModule from "node:module";
import { isAbsolute } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The CallSite methods V8 has and @types/node does not declare. */
interface CallSite extends NodeJS.CallSite {
  getEnclosingLineNumber(): number;
  getEnclosingColumnNumber(): number;
  isAsync(): boolean;
}

type SourceMap = InstanceType<typeof nodeModule.SourceMap>;

/** The map of each file a stack named, by file name (a path or a file: URL); undefined when it has none. */
const maps = new Map<string, SourceMap | undefined>();

/** From now on `error.stack` names the original sources of every file that has a source map. */
export function mapStackTraces(): void {
  const original = Error.prepareStackTrace;
  // Node's own (Error.prepareStackTrace is Node's default) writes the first line, `Name [CODE]: message` for its own errors.
  const header = (error: Error): string => (typeof original === "function" ? String(original(error, [])) : String(error));
  Error.prepareStackTrace = (error: Error, trace: NodeJS.CallSite[]) => {
    const frames = (trace as CallSite[]).map((site, i) => `\n    at ${frame(site, trace[i + 1] as CallSite | undefined)}`);
    return header(error) + frames.join("");
  };
}

function frame(site: CallSite, caller: CallSite | undefined): string {
  try {
    const file = site.getFileName() ?? site.getEvalOrigin();
    const map = file === undefined ? undefined : mapOf(file);
    if (map) return mappedFrame(map, site, caller);
  } catch {
    // A map that cannot be read or used leaves the frame as it was.
  }
  return String(site);
}

/** Node 20's serializeJSStackFrame. */
function mappedFrame(map: SourceMap, site: CallSite, caller: CallSite | undefined): string {
  // Source map lines and columns count from 0, a stack's from 1.
  const entry = map.findEntry(site.getLineNumber()! - 1, site.getColumnNumber()! - 1) as Partial<nodeModule.SourceMapping>;
  const { originalSource, originalLine, originalColumn } = entry;
  if (originalSource === undefined || originalLine === undefined || originalColumn === undefined) return String(site);
  const name = originalName(map, site, caller);
  const source = originalSource.startsWith("file://") ? fileURLToPath(originalSource) : originalSource;
  const fnName = site.getFunctionName() ?? site.getMethodName();
  const prefix = site.isAsync() ? "async " : site.isConstructor() ? "new " : "";
  const typeName = site.getTypeName();
  const generatedName = `${typeName !== null && typeName !== "global" ? `${typeName}.` : ""}${fnName || "<anonymous>"}`;
  const shown = name && name !== generatedName ? name : generatedName;
  return `${prefix}${shown} (${source}:${originalLine + 1}:${originalColumn + 1})`;
}

/** The name the map gives the enclosing function, or else the caller's call of it (Node 20's getOriginalSymbolName). */
function originalName(map: SourceMap, site: CallSite, caller: CallSite | undefined): string | undefined {
  const enclosing = map.findEntry(site.getEnclosingLineNumber() - 1, site.getEnclosingColumnNumber() - 1) as { name?: string };
  if (enclosing.name) return enclosing.name;
  if (caller && site.getFileName() === caller.getFileName())
    return (map.findEntry(caller.getLineNumber()! - 1, caller.getColumnNumber()! - 1) as { name?: string }).name;
  return undefined;
}

function mapOf(file: string): SourceMap | undefined {
  if (maps.has(file)) return maps.get(file);
  let map: SourceMap | undefined;
  try {
    map = readMap(file);
  } catch {
    map = undefined;
  }
  maps.set(file, map);
  return map;
}

/** The map a file's last `//# sourceMappingURL=` comment names (a file beside it, or a data: URL), its sources made absolute URLs. */
function readMap(file: string): SourceMap | undefined {
  if (!file.startsWith("file:") && !isAbsolute(file)) return undefined;
  const url = file.startsWith("file:") ? file : pathToFileURL(file).href;
  const code = readFileSync(new URL(url), "utf8");
  const mapUrl = [...code.matchAll(/\/[*/]#\s+sourceMappingURL=(?<url>[^\s]+)/g)].at(-1)?.groups?.url;
  if (mapUrl === undefined) return undefined;
  // As Node does: a data: URL holds the map, another absolute URL is not followed, a relative one is a file beside.
  const absolute = URL.canParse(mapUrl) ? new URL(mapUrl) : undefined;
  if (absolute && absolute.protocol !== "data:") return undefined;
  const payload = JSON.parse(
    absolute ? dataUrlText(absolute.pathname) : readFileSync(new URL(mapUrl, url), "utf8"),
  ) as nodeModule.SourceMapPayload;
  // As Node does: each source after the sourceRoot, relative to the map's file (the code's, for a data: URL).
  const where = absolute ? url : new URL(mapUrl, url).href;
  payload.sources = payload.sources.map((s) => {
    const source = (payload.sourceRoot || "") + s;
    return isAbsolute(source) ? pathToFileURL(source).href : new URL(source, where).href;
  });
  payload.sourceRoot = "";
  return new nodeModule.SourceMap(payload);
}

function dataUrlText(pathname: string): string {
  const comma = pathname.indexOf(",");
  const format = pathname.slice(0, comma).split(";");
  const data = pathname.slice(comma + 1);
  if (format[0] !== "application/json") throw new Error(`a source map of type ${format[0]}`);
  return format.at(-1) === "base64" ? Buffer.from(data, "base64").toString("utf8") : data;
}
