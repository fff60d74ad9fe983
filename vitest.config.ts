import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["wardrik-source"] },
  ssr: { resolve: { conditions: ["wardrik-source"] } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    typecheck: { enabled: true, include: ["packages/*/test/**/*.test-d.ts"], tsconfig: "./tsconfig.tests.json" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
