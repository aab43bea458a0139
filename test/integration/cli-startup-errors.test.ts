/**
 * Start-up failures of the real `gateway` command: it exits non-zero and prints one line per
 * problem, each naming the configuration file and the TOML key path at fault.
 */
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { runGateway, writeFiles } from "../support/gateway.ts"

const schema = JSON.stringify({
  type: "object",
  properties: { name: { type: "string" } },
  required: ["name"]
})

interface Failure {
  readonly configFile: string
  readonly stderr: string
  /** the problem lines, without their indentation */
  readonly problems: ReadonlyArray<string>
}

/** Starts the gateway on `config.toml` (plus `files`) and expects it to refuse to start. */
const failStartup = async (config: string, files: Record<string, string> = {}, env: Record<string, string | undefined> = {}): Promise<Failure> => {
  const dir = writeFiles({ "config.toml": config, ...files })
  const configFile = path.join(dir, "config.toml")
  const result = await runGateway(["--config-file", configFile], { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", ...env }, cwd: dir })
  expect(result.code, `the gateway started although the configuration is invalid:\n${result.stderr}`).not.toBe(0)
  expect(result.stderr).not.toContain("Listening on")
  // no stack trace, no Effect internals: only the report
  expect(result.stderr).not.toMatch(/\n\s+at /)
  const lines = result.stderr.trim().split("\n")
  const header = /^the configuration is invalid \((\d+) problems?\):$/.exec(lines[0])
  expect(header, result.stderr).not.toBeNull()
  const problems = lines.slice(1).map((line) => line.trim())
  expect(problems.length).toBe(Number(header![1]))
  return { configFile, stderr: result.stderr, problems }
}

/** The one problem line about `keyPath`, which must name the file. */
const problemAt = (failure: Failure, keyPath: string): string => {
  const prefix = `${failure.configFile}: ${keyPath}: `
  const matching = failure.problems.filter((line) => line.startsWith(prefix))
  expect(matching, `no problem reported at ${keyPath}; got:\n${failure.stderr}`).toHaveLength(1)
  return matching[0].slice(prefix.length)
}

const chatFunction = (variant: string, extra = "") => `
[functions.greet]
type = "chat"
${extra}
[functions.greet.variants.v]
type = "chat_completion"
${variant}
`

describe.concurrent("gateway start-up with an invalid configuration", () => {
  it("names a variant's unknown model", async () => {
    const failure = await failStartup(chatFunction(`model = "no_such_model"`))
    expect(failure.problems).toHaveLength(1)
    expect(problemAt(failure, "functions.greet.variants.v.model")).toMatch(/unknown model "no_such_model"/)
  })

  it("names a short-hand model of an unknown provider type as an unknown model", async () => {
    const failure = await failStartup(chatFunction(`model = "nosuchprovider::some-model"`))
    expect(problemAt(failure, "functions.greet.variants.v.model")).toMatch(/unknown model "nosuchprovider::some-model"/)
  })

  it("refuses schemas.<name> when a variant has no template <name>", async () => {
    const failure = await failStartup(
      chatFunction(`model = "dummy::echo_request_messages"`, `schemas.user.path = "user.json"`),
      { "user.json": schema }
    )
    expect(problemAt(failure, "functions.greet.variants.v")).toMatch(/schemas\.user.*no template "user"/)
  })

  it("names a missing template file with its resolved path", async () => {
    const failure = await failStartup(chatFunction(`model = "dummy::echo_request_messages"\ntemplates.system.path = "templates/missing.minijinja"`))
    const message = problemAt(failure, "functions.greet.variants.v.templates.system.path")
    expect(message).toMatch(/template file not found/)
    expect(message).toContain(path.join(path.dirname(failure.configFile), "templates/missing.minijinja"))
  })

  it("names a missing legacy template file under its legacy key", async () => {
    const failure = await failStartup(chatFunction(`model = "dummy::echo_request_messages"\nsystem_template = "missing.minijinja"`))
    expect(problemAt(failure, "functions.greet.variants.v.system_template")).toMatch(/template file not found/)
  })

  it("names a missing schema file", async () => {
    const failure = await failStartup(chatFunction(`model = "dummy::echo_request_messages"`, `schemas.system.path = "missing.json"`))
    expect(problemAt(failure, "functions.greet.schemas.system.path")).toMatch(/schema file not found: .*missing\.json/)
  })

  it("names a template with a syntax error", async () => {
    const failure = await failStartup(
      chatFunction(`model = "dummy::echo_request_messages"\ntemplates.system.path = "system.minijinja"`),
      { "system.minijinja": "Hello {{ name " }
    )
    expect(problemAt(failure, "functions.greet.variants.v.templates.system.path")).toMatch(/template syntax error/)
  })

  it("names an invalid JSON Schema and a schema file that is not JSON", async () => {
    const failure = await failStartup(
      chatFunction(`model = "dummy::echo_request_messages"\ntemplates.system.path = "s.minijinja"\ntemplates.user.path = "u.minijinja"`, `schemas.system.path = "system.json"\nschemas.user.path = "user.json"`),
      {
        "system.json": JSON.stringify({ type: "no-such-type" }),
        "user.json": "{ not json",
        "s.minijinja": "s",
        "u.minijinja": "u"
      }
    )
    expect(problemAt(failure, "functions.greet.schemas.system.path")).toMatch(/invalid JSON Schema/)
    expect(problemAt(failure, "functions.greet.schemas.user.path")).toMatch(/not valid JSON/)
  })

  it("names an invalid weight", async () => {
    const failure = await failStartup(`
[functions.greet]
type = "chat"
[functions.greet.variants.negative]
type = "chat_completion"
model = "dummy::hello"
weight = -0.5
[functions.greet.variants.text]
type = "chat_completion"
model = "dummy::hello"
weight = "heavy"
`)
    expect(problemAt(failure, "functions.greet.variants.negative.weight")).toMatch(/greater than or equal to 0/)
    expect(problemAt(failure, "functions.greet.variants.text.weight")).toMatch(/number|Finite/i)
  })

  it("refuses a positive-weight variant whose provider's credential variable is unset", async () => {
    const failure = await failStartup(
      `
[models.gpt]
routing = ["openai"]
[models.gpt.providers.openai]
type = "openai"
model_name = "gpt-4o-mini"
api_key_location = "env::GATEWAY_TEST_SURELY_UNSET_KEY"
${chatFunction(`model = "gpt"`)}
`,
      {},
      { GATEWAY_TEST_SURELY_UNSET_KEY: undefined }
    )
    expect(problemAt(failure, "functions.greet.variants.v.model")).toMatch(/GATEWAY_TEST_SURELY_UNSET_KEY is not set/)
  })

  it("refuses a short-hand openai model when OPENAI_API_KEY is unset", async () => {
    const failure = await failStartup(chatFunction(`model = "openai::gpt-4o-mini"`), {}, { OPENAI_API_KEY: undefined })
    expect(problemAt(failure, "functions.greet.variants.v.model")).toMatch(/OPENAI_API_KEY is not set/)
  })

  it("names an unknown provider type and an invalid credential location", async () => {
    const failure = await failStartup(`
[models.m]
routing = ["p", "q"]
[models.m.providers.p]
type = "nonsense"
model_name = "x"
[models.m.providers.q]
type = "dummy"
model_name = "hello"
api_key_location = "somewhere"
${chatFunction(`model = "m"`)}
`)
    expect(problemAt(failure, "models.m.providers.p.type")).toMatch(/unknown provider type "nonsense"/)
    expect(problemAt(failure, "models.m.providers.q.api_key_location")).toMatch(/env::NAME/)
  })

  it("names routing entries without a provider and providers outside routing", async () => {
    const failure = await failStartup(`
[models.m]
routing = ["ghost"]
[models.m.providers.p]
type = "dummy"
model_name = "hello"
`)
    expect(problemAt(failure, "models.m.routing[0]")).toMatch(/"ghost" is not defined/)
    expect(problemAt(failure, "models.m.providers.p")).toMatch(/not listed in routing/)
  })

  it("names every unknown key, at every level, in one run", async () => {
    const failure = await failStartup(`
unknown_section = 1

[gateway]
bind_addres = "127.0.0.1:0"

[models.m]
routing = ["p"]
colour = "blue"
[models.m.providers.p]
type = "dummy"
model_name = "hello"

[models.n]
routing = ["p"]
[models.n.providers.p]
type = "dummy"
model_name = "hello"
api_key = "secret"

[functions.typo]
type = "chat"
variant = {}

[functions.greet]
type = "chat"
[functions.greet.variants.v]
type = "chat_completion"
model = "dummy::hello"
temprature = 0.5
`)
    expect(problemAt(failure, "unknown_section")).toBe("unknown field")
    expect(problemAt(failure, "gateway.bind_addres")).toBe("unknown field")
    expect(problemAt(failure, "models.m.colour")).toBe("unknown field")
    expect(problemAt(failure, "models.n.providers.p.api_key")).toBe("unknown field")
    expect(problemAt(failure, "functions.typo.variant")).toBe("unknown field")
    expect(problemAt(failure, "functions.greet.variants.v.temprature")).toBe("unknown field")
    expect(failure.problems).toHaveLength(6)
  })

  it("reports several problems of different kinds at once, one line each", async () => {
    const failure = await failStartup(`
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "nonsense"
model_name = "x"

[functions.a]
type = "chat"
[functions.a.variants.v]
type = "chat_completion"
model = "unknown_model"

[functions.b]
type = "chat"
[functions.b.variants.v]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.system.path = "missing.minijinja"
weight = -1

[functions.c]
type = "json"
output_schema = "missing_output.json"
[functions.c.variants.v]
type = "chat_completion"
model = "dummy::json"
templates.system.path = "broken.minijinja"
`, { "broken.minijinja": "{% if %}" })
    expect(problemAt(failure, "models.m.providers.p.type")).toMatch(/unknown provider type/)
    expect(problemAt(failure, "functions.a.variants.v.model")).toMatch(/unknown model/)
    expect(problemAt(failure, "functions.b.variants.v.weight")).toMatch(/greater than or equal to 0/)
    expect(problemAt(failure, "functions.c.output_schema")).toMatch(/schema file not found/)
    expect(problemAt(failure, "functions.c.variants.v.templates.system.path")).toMatch(/template syntax error/)
    expect(failure.problems.length).toBeGreaterThanOrEqual(5)
    expect(failure.stderr).toMatch(/^the configuration is invalid \(\d+ problems\):/)
  })

  it("names a TOML syntax error with its file", async () => {
    const failure = await failStartup(`[functions.greet\ntype = "chat"`)
    expect(failure.problems).toHaveLength(1)
    expect(failure.problems[0]).toMatch(new RegExp(`^${failure.configFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: invalid TOML`))
  })

  it("names a configuration file that does not exist", async () => {
    const dir = writeFiles({})
    const result = await runGateway(["--config-file", path.join(dir, "absent.toml")])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${path.join(dir, "absent.toml")}: cannot read the configuration file`)
  })

  it("names a glob that matches nothing", async () => {
    const dir = writeFiles({})
    const result = await runGateway(["--config-file", path.join(dir, "**/*.toml")])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("no configuration file matches")
  })
})
