import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    // two files at once even on two cores: most of a file's time waits on gateway processes,
    // databases and fakes (the whole suite: 564 s one file at a time, 338 s two at a time)
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
