import { defineConfig } from "vitest/config"

/**
 * Two projects: the suite, files in parallel; then `cluster` (test/cluster/: scenarios that
 * start many processes and engines — replicas, a Redis Cluster, PgBouncer, several gateways with
 * workers), one file at a time once the suite is done, so that they neither starve the others
 * of the machine's cores nor take the shared Postgres's connections from them.
 */
export default defineConfig({
  test: {
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: "suite", include: ["test/**/*.test.ts"], exclude: ["test/cluster/**"], sequence: { groupOrder: 1 } }
      },
      {
        extends: true,
        test: { name: "cluster", include: ["test/cluster/**/*.test.ts"], fileParallelism: false, sequence: { groupOrder: 2 } }
      }
    ]
  }
})
