// Writes the JSON Schemas of config.yaml, agent frontmatter and policy files,
// and the HTTP API's OpenAPI document, to packages/daemon/schemas/ (the
// JSON Schemas also to packages/protocol/schemas/), from the
// built zod schemas and routes (run after tsc).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeJsonSchemas } from "../dist/editor-schemas.js";
import { describeApi } from "../dist/http/api-document.js";

writeJsonSchemas();
// @wardrik/protocol ships them too: a project's files name them in its node_modules (see schema-files.ts).
writeJsonSchemas(fileURLToPath(new URL("../../protocol/schemas/", import.meta.url)));
writeFileSync(new URL("../schemas/openapi.json", import.meta.url), `${JSON.stringify(await describeApi(), null, 2)}\n`);
