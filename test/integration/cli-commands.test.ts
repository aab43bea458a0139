/**
 * The command line of the real `gateway` command: which flags it needs, --help and
 * --version, the one-shot migration commands, and TensorZero's flags (--validate-and-exit,
 * --run-migrations, --run-clickhouse-migrations, --run-postgres-migrations).
 */
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freshDatabase, tablesOf, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { runGateway, writeFiles } from "../support/gateway.ts"

const validConfig = `
[functions.greet]
type = "chat"
[functions.greet.variants.only]
type = "chat_completion"
model = "dummy::hello"
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
    const flags = [
      "--config-file", "--config-path", "--default-config", "--run-migrations-only", "--log-format", "migrate",
      "--run-migrations", "--run-clickhouse-migrations", "--run-postgres-migrations", "--validate-and-exit", "--bind-address", "--watch-config"
    ]
    for (const flag of flags) {
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

/** no database answers here: a command that tried to reach one would fail */
const unreachable = "postgres://postgres@127.0.0.1:1/nowhere"
const noDatabases = { GATEWAY_ANALYTICS_DB_URL: undefined, GATEWAY_RELATIONAL_DB_URL: undefined }

/** runs `check` while a port of 127.0.0.1 is taken */
const withTakenPort = async <A>(check: (port: number) => Promise<A>): Promise<A> => {
  const blocker = net.createServer()
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
  try {
    return await check((blocker.address() as net.AddressInfo).port)
  } finally {
    blocker.close()
  }
}

describe.concurrent("--validate-and-exit", () => {
  it("exits 0 and prints nothing for a valid configuration, without reaching a database or binding its address", async () => {
    await withTakenPort(async (port) => {
      const file = configFile(`[gateway]\nbind_address = "127.0.0.1:${port}"\n${validConfig}`)
      const env = { GATEWAY_ANALYTICS_DB_URL: unreachable, GATEWAY_RELATIONAL_DB_URL: unreachable, GATEWAY_BIND_ADDRESS: undefined }
      const result = await runGateway(["--validate-and-exit", "--config-file", file], { env })
      expect(result).toEqual({ code: 0, stdout: "", stderr: "" })
      // the same command serving fails on the taken address
      const serving = await runGateway(["--config-file", file], { env: { ...env, ...noDatabases } })
      expect(serving.code).toBe(1)
      expect(serving.stderr).toContain("EADDRINUSE")
    })
  })

  it("exits 0 with --default-config", async () => {
    const result = await runGateway(["--validate-and-exit", "--default-config"], { env: { GATEWAY_ANALYTICS_DB_URL: unreachable } })
    expect(result).toEqual({ code: 0, stdout: "", stderr: "" })
  })

  it("exits 1 for an invalid configuration, printing its problems as start-up does", async () => {
    const file = configFile(invalidConfig)
    const result = await runGateway(["--validate-and-exit", "--config-file", file])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("the configuration is invalid (1 problem):")
    expect(result.stderr).toContain(`${file}: functions.greet.variants.only.model: unknown model "no_such_model"`)
  })

  it("validates the address --bind-address gives in place of bind_address", async () => {
    const file = configFile(`[gateway]\nbind_address = "localhost"\n${validConfig}`)
    const invalid = await runGateway(["--validate-and-exit", "--config-file", file], { env: { GATEWAY_BIND_ADDRESS: undefined } })
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toContain(`${file}: gateway.bind_address: expected HOST:PORT`)
    const overridden = await runGateway(["--validate-and-exit", "--config-file", file, "--bind-address", "127.0.0.1:8080"], {
      env: { GATEWAY_BIND_ADDRESS: undefined }
    })
    expect(overridden).toEqual({ code: 0, stdout: "", stderr: "" })
  })

  it("needs a configuration: exit 2 without --config-file or --default-config", async () => {
    const result = await runGateway(["--validate-and-exit"])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--validate-and-exit needs --config-file or --default-config")
  })
})

describe.concurrent("flags that exclude each other exit 2 with the reason", () => {
  const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
    [["--validate-and-exit", "--default-config", "--run-migrations"], "--validate-and-exit and --run-migrations exclude each other"],
    [["--run-postgres-migrations", "--create-api-key"], "--run-postgres-migrations and --create-api-key exclude each other"],
    [["--create-api-key", "--disable-api-key", "abcdefghijkl"], "--create-api-key and --disable-api-key exclude each other"],
    [["--run-clickhouse-migrations", "--bind-address", "127.0.0.1:0"], "--bind-address goes with serving, not with --run-clickhouse-migrations"],
    [["--run-migrations-only", "--workers", "2"], "--workers goes with serving, not with --run-migrations-only"],
    [["--default-config", "--validate-and-exit", "--watch-config"], "--watch-config goes with serving, not with --validate-and-exit"],
    [["--default-config", "--bind-address", "nowhere"], `--bind-address expects HOST:PORT (an IPv6 host in brackets), got "nowhere"`]
  ]
  for (const [args, reason] of cases) {
    it(args.join(" "), async () => {
      const result = await runGateway(args, { env: noDatabases })
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(reason)
      expect(result.stderr).toMatch(/usage: gateway/)
      expect(result.stdout).toBe("")
    })
  }
})

describe.concurrent("--run-clickhouse-migrations and --run-postgres-migrations without their database", () => {
  it("--run-postgres-migrations exits 1 naming GATEWAY_RELATIONAL_DB_URL", async () => {
    const result = await runGateway(["--run-postgres-migrations"], { env: noDatabases })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("--run-postgres-migrations: no relational database is configured: set GATEWAY_RELATIONAL_DB_URL")
  })

  it("--run-clickhouse-migrations exits 1 naming GATEWAY_ANALYTICS_DB_URL, even with a relational database", async () => {
    const result = await runGateway(["--run-clickhouse-migrations"], { env: { ...noDatabases, GATEWAY_RELATIONAL_DB_URL: unreachable } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("--run-clickhouse-migrations: no analytical database is configured: set GATEWAY_ANALYTICS_DB_URL")
  })

  it("--run-clickhouse-migrations exits 1 when the configuration turns observability off", async () => {
    const file = configFile(`[gateway.observability]\nenabled = false\n${validConfig}`)
    const result = await runGateway(["--run-clickhouse-migrations", "--config-file", file], { env: { GATEWAY_ANALYTICS_DB_URL: unreachable } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("observability is off ([gateway.observability] enabled = false)")
  })

  it("both flags together name both variables", async () => {
    const result = await runGateway(["--run-clickhouse-migrations", "--run-postgres-migrations"], { env: noDatabases })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("GATEWAY_ANALYTICS_DB_URL")
    expect(result.stderr).toContain("GATEWAY_RELATIONAL_DB_URL")
  })
})

describe.concurrent("TensorZero's migration flags on fresh databases", () => {
  const databases: Array<TestDatabase> = []
  const fresh = async (backend: TestBackend) => {
    const database = await freshDatabase(backend)
    databases.push(database)
    return database
  }
  afterAll(async () => {
    await Promise.all(databases.map((database) => database.drop()))
  })

  /** an analytical database on `backend` and a relational Postgres database, both empty */
  const freshPair = async (backend: TestBackend) => {
    const [analytical, relational] = await Promise.all([fresh(backend), fresh("postgres")])
    return { analytical, relational, env: { GATEWAY_ANALYTICS_DB_URL: analytical.url, GATEWAY_RELATIONAL_DB_URL: relational.url } }
  }

  it("--run-postgres-migrations migrates the relational database only", async () => {
    const { analytical, relational, env } = await freshPair("clickhouse")
    const result = await runGateway(["--run-postgres-migrations"], { env })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain("relational database: applied migrations")
    expect(await tablesOf(relational)).toEqual(expect.arrayContaining(["api_keys", "rate_limit_buckets", "gateway_migrations"]))
    expect(await tablesOf(analytical)).toEqual([])
  })

  it("--run-clickhouse-migrations migrates the analytical database only", async () => {
    const { analytical, relational, env } = await freshPair("clickhouse")
    const result = await runGateway(["--run-clickhouse-migrations"], { env })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain("clickhouse: applied migrations 0001_observability_tables")
    expect(await tablesOf(analytical)).toEqual(expect.arrayContaining(["ChatInference", "JsonInference"]))
    expect(await tablesOf(relational)).toEqual([])
  })

  it("--run-clickhouse-migrations migrates an analytical database on Postgres, and says so", async () => {
    const { analytical, relational, env } = await freshPair("postgres")
    const result = await runGateway(["--run-clickhouse-migrations"], { env })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain("the analytical database is a Postgres database: applying its migrations")
    expect(result.stderr).toContain("postgres: applied migrations 0001_observability_tables")
    expect(await tablesOf(analytical)).toEqual(expect.arrayContaining(["chat_inference", "json_inference"]))
    expect(await tablesOf(relational)).toEqual([])
  })

  it("--run-migrations, and both flags together, migrate both databases", async () => {
    for (const args of [["--run-migrations"], ["--run-clickhouse-migrations", "--run-postgres-migrations"]]) {
      const { analytical, relational, env } = await freshPair("clickhouse")
      const result = await runGateway(args, { env })
      expect(result.code, result.stderr).toBe(0)
      expect(await tablesOf(analytical), args.join(" ")).toContain("ChatInference")
      expect(await tablesOf(relational), args.join(" ")).toContain("api_keys")
    }
  })
})
