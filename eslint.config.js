import tseslint from "typescript-eslint";

/**
 * The daemon's layers: http and cli -> cluster, replay -> runtime -> (models, tools,
 * policy) -> store. A folder may import the ones below it, never one above:
 * the rule for each folder lists what it must not reach. config, events, log,
 * secrets and ids are shared by all. (test/lint/layer-rules.test.ts shows the
 * rules fire.)
 */
const SRC = "packages/daemon/src";
const ABOVE = {
  store: ["runtime", "http", "cli", "tools", "models", "policy", "cluster", "replay", "daemon"],
  tools: ["runtime", "http", "cli", "cluster", "replay", "daemon"],
  models: ["runtime", "http", "cli", "cluster", "replay", "daemon"],
  policy: ["runtime", "http", "cli", "cluster", "replay", "daemon"],
  // The runtime learns of other nodes through the ownership interface it defines; cluster/ implements it.
  runtime: ["http", "cli", "cluster", "replay", "daemon"],
  // Replays drive a runtime of their own in a scratch copy; what serves requests calls them.
  replay: ["http", "cli", "cluster", "daemon"],
  // Several daemons on one database: built on runtime, store, tools and events, never on what serves requests.
  cluster: ["http", "cli", "models", "policy", "daemon"],
  http: ["cli"],
  // The CLI talks to the daemon over HTTP; only offline secrets open the store.
  cli: ["runtime", "http", "tools", "models", "policy", "cluster", "replay"],
};
const NO_INTERNALS = { group: ["**/packages/*/src/**", "@wardrik/*/src/**"], message: "Import the package, not its src/." };
const layerRules = Object.entries(ABOVE).map(([folder, above]) => ({
  files: [`${SRC}/${folder}/**/*.ts`],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          NO_INTERNALS,
          {
            group: above.flatMap((a) => [`../${a}/**`, `../../${a}/**`, `../../../${a}/**`, `../${a}.js`, `../../${a}.js`]),
            message: `${folder}/ sits below ${above.join(", ")}: it must not import them (see the layers in eslint.config.js).`,
          },
        ],
      },
    ],
  },
}));

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
