/**
 * The command line of the real `gateway` command: which flags it needs, --help and
 * --version, and the one-shot migration commands.
 */
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { runGateway, writeFiles } from "../support/gateway.ts"

const validConfig = `
[functions.greet]
type = "chat"
[functions.greet.variants.only]
type = "chat_completion"
model = "dummy::text"
`
const invalidConfig = `
[functions.greet]
type = "chat"
[functions.greet.variants.only]
type = "chat_completion"
model = "no_such_model"
`

const configFile = (text: string) => path.join(writeFiles({ "config.toml": text }), "config.toml")

describe.concurrent("the gateway command line", () => {
  it("refuses to run without a mode flag, with a usage message", async () => {
    const result = await runGateway([])
    expect(result.code).not.toBe(0)
    expect(result.code).not.toBeNull()
    expect(result.stderr).toContain("one of --config-file, --default-config or --run-migrations-only is required")
    expect(result.stderr).toMatch(/usage: gateway/)
    expect(result.stderr).not.toContain("Listening on")
  })

  it("refuses --default-config together with --config-file", async () => {
    const result = await runGateway(["--default-config", "--config-file", configFile(validConfig)])
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/exclude each other/)
    expect(result.stderr).toMatch(/usage: gateway/)
  })

  it("refuses an unknown flag", async () => {
    const result = await runGateway(["--no-such-flag"])
    expect(result.code).not.toBe(0)
    expect(result.stdout + result.stderr).toContain("--no-such-flag")
  })

  it("refuses an unknown --log-format", async () => {
    const result = await runGateway(["--default-config", "--log-format", "xml"])
    expect(result.code).not.toBe(0)
    expect(result.stdout + result.stderr).not.toContain("Listening on")
  })

  it("--help lists the flags and exits 0", async () => {
    const result = await runGateway(["--help"])
    expect(result.code).toBe(0)
    for (const flag of ["--config-file", "--config-path", "--default-config", "--run-migrations-only", "--log-format", "migrate"]) {
      expect(result.stdout).toContain(flag)
    }
  })

  it("--version prints 0.1.0 and exits 0", async () => {
    const result = await runGateway(["--version"])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/(^|[^\d.])0\.1\.0(?![\d.])/)
  })

  it("--run-migrations-only exits 0 without a configuration", async () => {
    const result = await runGateway(["--run-migrations-only"])
    expect(result.code).toBe(0)
    expect(result.stderr).not.toContain("Listening on")
  })

  it("--run-migrations-only exits 0 with a valid configuration", async () => {
    const result = await runGateway(["--run-migrations-only", "--config-file", configFile(validConfig)])
    expect(result.code).toBe(0)
  })

  it("--run-migrations-only validates the configuration it is given", async () => {
    const file = configFile(invalidConfig)
    const result = await runGateway(["--run-migrations-only", "--config-file", file])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${file}: functions.greet.variants.only.model: unknown model "no_such_model"`)
  })

  it("`gateway migrate` exits 0, with or without a configuration", async () => {
    const [bare, configured] = await Promise.all([
      runGateway(["migrate"]),
      runGateway(["migrate", "--config-file", configFile(validConfig)])
    ])
    expect(bare.code).toBe(0)
    expect(configured.code).toBe(0)
  })

  it("`gateway migrate` validates the configuration it is given", async () => {
    const file = configFile(invalidConfig)
    const result = await runGateway(["migrate", "--config-path", file])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${file}: functions.greet.variants.only.model`)
  })

  it("--log-format json logs JSON lines", async () => {
    const result = await runGateway(["--run-migrations-only", "--log-format", "json"])
    expect(result.code).toBe(0)
    const lines = result.stderr.split("\n").filter((line) => line.trim() !== "")
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      const entry = JSON.parse(line)
      expect(entry).toHaveProperty("message")
      expect(entry).toHaveProperty("level")
    }
  })

  it("--log-format pretty (the default) does not log JSON", async () => {
    const result = await runGateway(["--run-migrations-only"])
    const lines = result.stderr.split("\n").filter((line) => line.trim() !== "")
    expect(lines.length).toBeGreaterThan(0)
    expect(() => JSON.parse(lines[0])).toThrow()
  })
})
