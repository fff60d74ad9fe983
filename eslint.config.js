import tseslint from "typescript-eslint";

/**
 * The daemon's dependency graph, written down once: each folder of
 * packages/daemon/src and the folders it may import (besides itself). The
 * README's Architecture section draws the same graph, and
 * test/lint/layer-rules.test.ts checks that every folder is here, that the
 * README agrees, and that the rules fire. The shared files at the top of src/
 * (ids, version, package-dir, optional-modules, create-file-once,
 * schema-files, admin-token, daemon-file) are for every folder; the files that assemble
 * the daemon (ASSEMBLY) only for cli/.
 */
const SRC = "packages/daemon/src";
export const DAEMON_GRAPH = {
  log: [],
  config: [],
  // Checks values against a JSON Schema (typed answers, tool arguments): a leaf like log/.
  "json-schema": [],
  // The storage core: rows, the events they hold (typed in events/), the secrets they encrypt (keys in secrets/).
  store: ["events", "secrets"],
  events: ["secrets", "store"],
  secrets: ["config", "store"],
  metrics: ["events", "store"],
  policy: ["config", "log"],
  tools: ["config", "log", "policy", "secrets", "store"],
  models: ["config", "log", "store", "tools"],
  webhooks: ["config", "events", "log", "store"],
  // The runtime learns of other nodes through the ownership interface it defines; cluster/ implements it.
  runtime: ["config", "json-schema", "log", "models", "policy", "store", "tools"],
  // Several daemons on one database: built on runtime, store, tools and events, never on what serves requests.
  cluster: ["events", "log", "runtime", "secrets", "store", "tools"],
  // Replays drive a runtime of their own in a scratch copy; what serves requests calls them.
  replay: ["config", "events", "log", "models", "policy", "runtime", "secrets", "store", "tools"],
  triggers: ["config", "events", "log", "runtime", "store", "webhooks"],
  // What serves requests: the HTTP API, and the Slack and MCP endpoints it mounts (which use its helpers).
  http: [
    "agent-mcp",
    "cluster",
    "config",
    "events",
    "json-schema",
    "log",
    "metrics",
    "policy",
    "replay",
    "runtime",
    "secrets",
    "slack",
    "store",
    "tools",
  ],
  slack: ["config", "events", "http", "log", "metrics", "runtime", "store"],
  "agent-mcp": ["events", "http", "store"],
  telemetry: ["config", "events", "http", "log", "metrics", "runtime", "store", "tools"],
  // The CLI talks to the daemon over HTTP; only offline commands (secrets, the store) open the database.
  cli: ["config", "log", "secrets", "store"],
};
/** Files at the top of src/ that build and run the daemon from every folder: only cli/ (and they themselves) may import them. */
export const ASSEMBLY = [
  "daemon",
  "daemon-parts",
  "daemon-services",
  "service-list",
  "daemon-workers",
  "daemon-signals",
  "open-project",
  "project-agents",
  "project-check",
  "events-io",
  "editor-schemas",
  "index",
];
const NO_INTERNALS = { group: ["**/packages/*/src/**", "@wardrik/*/src/**"], message: "Import the package, not its src/." };
const UP = ["../", "../../", "../../../"];
const layerRules = Object.entries(DAEMON_GRAPH).map(([folder, allowed]) => {
  const barred = Object.keys(DAEMON_GRAPH).filter((f) => f !== folder && !allowed.includes(f));
  const assembly = folder === "cli" ? [] : ASSEMBLY;
  const reach = allowed.length ? allowed.join(", ") : "no other folder";
  return {
    files: [`${SRC}/${folder}/**/*.ts`],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            NO_INTERNALS,
            {
              group: [...barred.flatMap((b) => UP.map((up) => `${up}${b}/**`)), ...assembly.flatMap((a) => UP.map((up) => `${up}${a}.js`))],
              message: `${folder}/ may import ${reach} and the shared files, not ${[...barred, ...(assembly.length ? ["the daemon's assembly"] : [])].join(", ")} (the graph in eslint.config.js and the README's Architecture).`,
            },
          ],
        },
      ],
    },
  };
});

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "**/bin/**",
      "eslint.config.js",
      "**/*.js",
      // Only the repository's own folders: a project made by `wardrik init` inside the checkout is its owner's code.
      "*",
      "!packages/",
      "!bench/",
      "!scripts/",
      "!test/",
      "!vitest.config.ts",
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { project: "./tsconfig.tests.json", tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-imports": ["error", { patterns: [NO_INTERNALS] }],
    },
  },
  {
    // The web console runs in a browser: its own tsconfig (DOM, bundler resolution) types it, .tsx included.
    files: ["packages/console/src/**/*.ts", "packages/console/src/**/*.tsx"],
    languageOptions: { parserOptions: { project: "./packages/console/tsconfig.json", tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false, attributes: false } }],
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  ...layerRules,
  {
    // One concept per file: a source file over 400 lines is two files.
    files: ["packages/*/src/**/*.ts", "packages/*/src/**/*.tsx"],
    rules: { "max-lines": ["error", { max: 400 }] },
  },
);
