// Writes the JSON Schemas of config.yaml, agent frontmatter and policy files to
// packages/daemon/schemas/, from the built zod schemas (run after tsc).
import { writeJsonSchemas } from "../dist/editor-schemas.js";

writeJsonSchemas();
