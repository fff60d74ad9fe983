import tseslint from "typescript-eslint";

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
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["**/packages/*/src/**", "@wardrik/*/src/**"], message: "Import the package, not its src/." }] },
      ],
    },
  },
);
