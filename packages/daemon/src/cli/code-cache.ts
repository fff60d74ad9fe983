/**
 * A CommonJS file required with a V8 code cache: the bytecode V8 made of the
 * file when `npm run build` ran it once (scripts/bundle-daemon.mjs writes
 * dist/bundle/daemon.cjs.cache), so a process that requires it skips most of
 * compiling it, the lazily compiled functions its start runs included. For
 * daemon.cjs, about 60 ms of CPU at every daemon start (Node 20 keeps no such
 * cache of its own; Node 22's module.enableCompileCache does this).
 *
 * The cache starts with the SHA-256 of the file it was made from and that of
 * V8's data: V8 checks only its own version, its flags and the source's
 * length (a cache of another build of the file would be taken), and not its
 * data's integrity. A cache that does not match, or that V8 refuses (another
 * Node version, other V8 flags), is not used: the file compiles as a plain
 * require() would compile it.
 */
import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname } from "node:path";
import * as vm from "node:vm";
import { Script } from "node:vm";

const HASH_BYTES = 32;
/** An import() in the file loads as in any CommonJS file; vm.constants came with Node 20.12, and the package runs on any Node 20. */
const MAIN_CONTEXT_LOADER = (vm as Partial<Pick<typeof vm, "constants">>).constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
const MAIN_CONTEXT_IMPORTS: Pick<vm.ScriptOptions, "importModuleDynamically"> =
  MAIN_CONTEXT_LOADER === undefined ? {} : { importModuleDynamically: MAIN_CONTEXT_LOADER };
const sha256 = (data: Buffer): Buffer => createHash("sha256").update(data).digest();

/** The cache file of `file`. */
export function codeCacheFile(file: string): string {
  return `${file}.cache`;
}

/** The result of requireWithCodeCache: the module's exports, whether V8 used the cache, and the script it compiled (none when the file was required before). */
export interface CachedRequire {
  exports: unknown;
  cacheUsed: boolean;
  script?: Script;
}

interface LoadableModule {
  exports: unknown;
  require(id: string): unknown;
  _compile(content: string, filename: string): unknown;
}
const NodeModule = Module as unknown as { prototype: LoadableModule; _cache: Record<string, unknown> };

/**
 * Requires `file` (an absolute path) through Node's require(): resolved, cached
 * and given its own require, module, __filename and __dirname as any file is,
 * only compiled with the code cache beside it when that was made from this
 * file's content.
 */
export function requireWithCodeCache(file: string): CachedRequire {
  if (NodeModule._cache[file] !== undefined) return { exports: createRequire(file)(file), cacheUsed: false };
  const proto = NodeModule.prototype;
  const compile = proto._compile;
  let compiled: { script: Script; cacheUsed: boolean } | undefined;
  proto._compile = function (this: LoadableModule, content: string, filename: string) {
    if (filename !== file) return compile.call(this, content, filename);
    proto._compile = compile;
    const cachedData = cacheFor(Buffer.from(content, "utf8"), codeCacheFile(file));
    const script = new Script(Module.wrap(content), {
      filename,
      ...(cachedData ? { cachedData } : {}),
      ...MAIN_CONTEXT_IMPORTS,
    });
    compiled = { script, cacheUsed: cachedData !== undefined && !script.cachedDataRejected };
    // As Node's own (makeRequireFunction): a require() of this module, resolving from its folder.
    const own = createRequire(filename);
    const require = Object.assign((id: string) => this.require(id), { resolve: own.resolve, cache: own.cache, main: own.main });
    const wrapper = script.runInThisContext() as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, require, this, filename, dirname(filename));
  };
  try {
    const exports = createRequire(file)(file);
    return { exports, cacheUsed: compiled?.cacheUsed ?? false, ...(compiled ? { script: compiled.script } : {}) };
  } finally {
    proto._compile = compile;
  }
}

/** Writes `file`'s cache from `script` (requireWithCodeCache's), with what V8 compiled of it so far. */
export function writeCodeCache(file: string, script: Script): void {
  const data = script.createCachedData();
  const cache = codeCacheFile(file);
  writeFileSync(`${cache}.tmp`, Buffer.concat([sha256(readFileSync(file)), sha256(data), data]));
  renameSync(`${cache}.tmp`, cache);
}

/** The V8 data in `cacheFile` when it was made from `source` and is whole; undefined when there is none, it is another file's or damaged. */
function cacheFor(source: Buffer, cacheFile: string): Buffer | undefined {
  let cache: Buffer;
  try {
    cache = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  const data = cache.subarray(2 * HASH_BYTES);
  if (data.length === 0 || !sha256(source).equals(cache.subarray(0, HASH_BYTES))) return undefined;
  return sha256(data).equals(cache.subarray(HASH_BYTES, 2 * HASH_BYTES)) ? data : undefined;
}
