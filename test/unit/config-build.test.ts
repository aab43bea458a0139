import { describe, expect, it } from "vitest"
import { buildConfig } from "../../src/config/build.ts"
import { defaultBindAddress, defaultMaxRequestBodyBytes, parseBindAddress } from "../../src/config/gateway.ts"
import { includedNameProblem } from "../../src/config/paths.ts"
import { templateKey } from "../../src/inference/templates.ts"
import { gepaAnalyzeFunction, gepaBuiltins, gepaMutateFunction } from "../../src/optimization/gepa/builtins.ts"
import { buildErrors, buildOk, configPath, functionOf, json, variantOf } from "./fixtures.ts"

const F = configPath

const userSchema = json({
  type: "object",
  properties: { name: { type: "string" } },
  required: ["name"],
  additionalProperties: false
})
const systemSchema = json({ type: "object", properties: { tone: { type: "string" } }, required: ["tone"] })
const weatherParams = json({
  type: "object",
  properties: { location: { type: "string" }, units: { enum: ["celsius", "fahrenheit"] } },
  required: ["location"]
})

const chatFunction = (variants: string, extra = "") => `
[functions.f]
type = "chat"
${extra}
${variants}
`

const dummyVariant = (name: string, extra = "") => `
[functions.f.variants.${name}]
type = "chat_completion"
model = "dummy::hello"
${extra}
`

/** the one error expected, checked to be `<file>: <key.path>: <message>` */
const onlyError = (errors: ReadonlyArray<string>, keyPath: string): string => {
  expect(errors).toHaveLength(1)
  expect(errors[0].startsWith(`${F}: ${keyPath}: `), `"${errors[0]}" should start with "${F}: ${keyPath}: "`).toBe(true)
  return errors[0].slice(`${F}: ${keyPath}: `.length)
}

/** the error of `keyPath` among several */
const errorAt = (errors: ReadonlyArray<string>, keyPath: string): string => {
  const found = errors.find((error) => error.startsWith(`${F}: ${keyPath}: `))
  expect(found, `no error at ${keyPath} among:\n${errors.join("\n")}`).toBeDefined()
  return found!.slice(`${F}: ${keyPath}: `.length)
}

describe("buildConfig: a valid configuration", () => {
  it("builds models, functions, variants, tools and metrics from TOML and the files it names", () => {
    const config = buildOk(`
[gateway]
debug = true
max_request_body_bytes = 1024
max_request_bytes_in_flight = 4096
max_connections = 10
workers = "auto"
overhead_header = true
unsupported_builtin_tools = "refuse"
stream_keepalive_ms = 2500
metrics.require_auth = true
ui = { enabled = false, session_ttl_s = 600 }
request_read_timeout_ms = 5000
drain_delay_ms = 15000
global_outbound_http_timeout_ms = 60000
max_provider_response_bytes = 2048
max_provider_stream_event_bytes = 512
cache = { share_across_api_keys = true, lookup_timeout_ms = 50, backend = "valkey", valkey = { ttl_s = 60 } }
tasks = { unrunnable_timeout_s = 120 }
observability = { disable_automatic_migrations = true, batch_writes = { max_rows = 50, max_bytes = 1000, flush_interval_ms = 20 }, max_queued_writes = 500, max_queued_bytes = 9000, max_row_bytes = 1048576 }
dummy_shorthands = false
export.otlp.traces = { enabled = true, extra_headers = { authorization = "Bearer t" }, sample_ratio = 0.25 }
embedded_database = { min_free_bytes = 1048576, free_space_check_interval_ms = 250 }
auth = { max_failed_attempts_per_minute = 7 }

[models.gpt]
routing = ["main", "backup"]
[models.gpt.providers.main]
type = "openai"
model_name = "gpt-4o-mini"
api_base = "http://127.0.0.1:9999/v1"
[models.gpt.providers.backup]
type = "dummy"
model_name = "hello"

[tools.get_weather]
description = "Get the weather"
parameters = "tools/weather.json"
strict = true

[functions.f]
type = "chat"
description = "greets"
tools = ["get_weather"]
tool_choice = "required"
parallel_tool_calls = false
schemas.user.path = "schemas/user.json"

[functions.f.variants.a]
type = "chat_completion"
model = "gpt"
templates.user.path = "templates/user.minijinja"
temperature = 0.5
max_tokens = 100
stop_sequences = ["END"]
retries = { num_retries = 2, max_delay_s = 1 }
timeouts = { non_streaming = { total_ms = 5000 } }
extra_body = [{ pointer = "/x", value = 1 }]
extra_headers = [{ name = "X-A", value = "b" }]

[metrics.happy]
type = "boolean"
level = "episode"
`, {
      files: {
        "/cfg/tools/weather.json": weatherParams,
        "/cfg/schemas/user.json": userSchema,
        "/cfg/templates/user.minijinja": "Hello {{ name }}!"
      },
      env: { OPENAI_API_KEY: "sk-test" }
    })
    expect(config.gateway).toEqual({
      bindAddress: { host: "0.0.0.0", port: 3000 },
      basePath: "",
      debug: true,
      maxRequestBodyBytes: 1024,
      maxRequestBytesInFlight: 4096,
      maxConnections: 10,
      workers: "auto",
      overheadHeader: true,
      unsupportedBuiltinTools: "refuse",
      streamKeepaliveMs: 2500,
      errorJson: false,
      metrics: { requireAuth: true },
      ui: { enabled: false, sessionTtlS: 600 },
      requestReadTimeoutMs: 5000,
      drainDelayMs: 15000,
      globalOutboundHttpTimeoutMs: 60000,
      maxProviderResponseBytes: 2048,
      maxProviderStreamEventBytes: 512,
      cache: { shareAcrossApiKeys: true, lookupTimeoutMs: 50, backend: "valkey", valkeyTtlS: 60 },
      batch: { pollIntervalS: 60 },
      tasks: { unrunnableTimeoutS: 120 },
      templateFilesystemAccess: false,
      dummyShorthands: false,
      observability: {
        enabled: true,
        backend: "auto",
        disableAutomaticMigrations: true,
        maxRows: 50,
        maxBatchBytes: 1000,
        flushIntervalMs: 20,
        maxQueued: 500,
        maxQueuedBytes: 9000,
        maxRowBytes: 1048576
      },
      embeddedDatabase: { minFreeBytes: 1048576, freeSpaceCheckIntervalMs: 250 },
      traceExport: { enabled: true, extraHeaders: { authorization: "Bearer t" }, sampleRatio: 0.25 },
      auth: { enabled: false, cacheTtlMs: 1000, maxFailedAttemptsPerMinute: 7 }
    })

    const model = config.models.get("gpt")!
    expect(model.routing).toEqual(["main", "backup"])
    const main = model.providers.get("main")!
    expect(main.type).toBe("openai")
    expect(main.modelName).toBe("gpt-4o-mini")
    expect(main.credential).toEqual({ kind: "static", value: "sk-test" })
    expect(main.settings).toEqual({ api_base: "http://127.0.0.1:9999/v1" })
    expect(model.providers.get("backup")!.credential).toEqual({ kind: "none" })

    const tool = config.tools.get("get_weather")!
    expect(tool.name).toBe("get_weather")
    expect(tool.description).toBe("Get the weather")
    expect(tool.parameters).toEqual(JSON.parse(weatherParams))
    expect(tool.strict).toBe(true)
    expect(tool.validator.validate({ location: "Paris" })).toBeUndefined()
    expect(tool.validator.validate({ units: "kelvin" })).toBeDefined()

    const fn = functionOf(config, "f")
    expect(fn.type).toBe("chat")
    expect(fn.description).toBe("greets")
    expect(fn.tools).toEqual(["get_weather"])
    expect(fn.toolChoice).toEqual({ type: "required" })
    expect(fn.parallelToolCalls).toBe(false)
    expect(fn.schemas.get("user")!.validate({ name: "Ada" })).toBeUndefined()
    expect(fn.schemas.get("user")!.validate({ name: 1 })).toBeDefined()

    const variant = variantOf(config, "f", "a")
    expect(variant.weight).toBe(1)
    expect(variant.model).toBe("gpt")
    expect(variant.jsonMode).toBe("off")
    expect(variant.params).toEqual({ temperature: 0.5, max_tokens: 100, stop_sequences: ["END"] })
    expect(variant.retries).toEqual({ numRetries: 2, maxDelayS: 1 })
    expect(variant.timeouts).toEqual({ non_streaming: { total_ms: 5000 } })
    expect(variant.extraBody).toEqual([{ pointer: "/x", value: 1 }])
    expect(variant.extraHeaders).toEqual([{ name: "X-A", value: "b" }])
    expect(config.templates.render(variant.templates.get("user")!, { name: "Ada" })).toEqual({ text: "Hello Ada!" })

    expect(config.metrics.get("happy")).toEqual({ name: "happy", type: "boolean", level: "episode", optimize: "max" })
  })

  it("builds an empty configuration (--default-config) with the defaults", () => {
    const result = buildConfig({ sources: [], readFile: () => undefined, env: {}, builtins: gepaBuiltins })
    if ("errors" in result) throw new Error(result.errors.join("\n"))
    expect(result.config.gateway.bindAddress).toEqual(parseBindAddress(defaultBindAddress))
    expect(result.config.gateway.maxRequestBodyBytes).toBe(defaultMaxRequestBodyBytes)
    // only the built-in functions (GEPA's analyst and mutator)
    expect([...result.config.functions.keys()].sort()).toEqual([gepaAnalyzeFunction, gepaMutateFunction].sort())
    expect(result.config.models.size).toBe(0)
  })

  it("gives a variant the retry defaults: no retries, 10 s maximum delay", () => {
    const config = buildOk(chatFunction(dummyVariant("v")))
    expect(variantOf(config, "f", "v").retries).toEqual({ numRetries: 0, maxDelayS: 10 })
  })

  it("reports every problem at once, not only the first", () => {
    const errors = buildErrors(`
[functions.f]
type = "chat"
[functions.f.variants.a]
type = "chat_completion"
model = "nope"
[functions.g]
type = "chat"
[functions.g.variants.b]
type = "chat_completion"
model = "dummy::x"
weight = -2
[metrics.comment]
type = "boolean"
level = "inference"
`)
    expect(errors).toHaveLength(3)
    errorAt(errors, "functions.f.variants.a.model")
    errorAt(errors, "functions.g.variants.b.weight")
    errorAt(errors, "metrics.comment")
  })

  it("goes on checking below a table that has an unknown key", () => {
    const errors = buildErrors(`
[functions.f]
type = "chat"
colour = "blue"
[functions.f.variants.a]
type = "chat_completion"
model = "nope"
shade = 1

[models.m]
routing = ["p"]
speed = "fast"
[models.m.providers.p]
type = "martian"
model_name = "x"
`)
    expect(errors).toHaveLength(5)
    expect(errorAt(errors, "functions.f.colour")).toBe("unknown field")
    expect(errorAt(errors, "functions.f.variants.a.shade")).toBe("unknown field")
    expect(errorAt(errors, "functions.f.variants.a.model")).toMatch(/^unknown model "nope"/)
    expect(errorAt(errors, "models.m.speed")).toBe("unknown field")
    expect(errorAt(errors, "models.m.providers.p.type")).toMatch(/^unknown provider type "martian"/)
  })
})

describe("buildConfig: [gateway.observability] max_row_bytes", () => {
  it("is 8 MiB by default, and refused outside 64 KiB to 10 MiB (a stored row must stay readable)", () => {
    expect(buildOk("").gateway.observability.maxRowBytes).toBe(8 * 1024 * 1024)
    for (const bytes of [1000, 11 * 1024 * 1024]) {
      const message = onlyError(buildErrors(`[gateway.observability]\nmax_row_bytes = ${bytes}\n`), "gateway.observability.max_row_bytes")
      expect(message).toBe(`expected 65536 to 10485760 bytes (a stored row must stay readable: the Postgres driver reads rows of at most 16 MiB), got ${bytes}`)
    }
  })
})

describe("buildConfig: [gateway.observability.durable_queue]", () => {
  it("is off unless a path is set; then fsync batch, the queue's bound plus two segments, 16 MiB segments", () => {
    expect(buildOk("").gateway.observability.durableQueue).toBeUndefined()
    expect(buildOk(`[gateway.observability]\nmax_queued_bytes = 1000000\ndurable_queue = { path = "queue" }\n`).gateway.observability.durableQueue).toEqual({
      path: "queue",
      fsync: "batch",
      fsyncIntervalMs: 100,
      maxBytes: 1_000_000 + 32 * 1024 * 1024,
      segmentBytes: 16 * 1024 * 1024,
      replayIntervalMs: 30_000
    })
    const set = `[gateway.observability.durable_queue]\npath = "/q"\nfsync = "always"\nfsync_interval_ms = 5\nmax_bytes = 5000\nsegment_bytes = 1000\nreplay_interval_ms = 10\n`
    expect(buildOk(set).gateway.observability.durableQueue).toEqual({ path: "/q", fsync: "always", fsyncIntervalMs: 5, maxBytes: 5000, segmentBytes: 1000, replayIntervalMs: 10 })
    expect(onlyError(buildErrors(`[gateway.observability.durable_queue]\npath = "/q"\nfsync = "sometimes"\n`), "gateway.observability.durable_queue.fsync")).toMatch(/batch/)
  })
})

describe("buildConfig: [gateway] stream_keepalive_ms", () => {
  it("is 15 s by default, and refused unless a positive integer, naming the key", () => {
    expect(buildOk("").gateway.streamKeepaliveMs).toBe(15_000)
    const refused = (value: string) => onlyError(buildErrors(`[gateway]\nstream_keepalive_ms = ${value}\n`), "gateway.stream_keepalive_ms")
    expect(refused("0")).toBe("Expected a value greater than 0, got 0")
    expect(refused("-5")).toBe("Expected a value greater than 0, got -5")
    expect(refused("1.5")).toBe("Expected an integer, got 1.5")
  })
})

describe("buildConfig: extra_body pointers", () => {
  it("refuses a configured extra_body pointer that is not a JSON Pointer, on a provider and on a variant", () => {
    const errors = buildErrors(`
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "dummy"
model_name = "x"
extra_body = [{ pointer = "temperature", value = 1 }]

[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
extra_body = [{ pointer = "/ok", value = 1 }, { pointer = "", delete = true }]
`)
    expect(errors).toEqual([
      `${configPath}: models.m.providers.p.extra_body[0].pointer: "temperature" is not a JSON Pointer to a field (it must start with "/")`,
      `${configPath}: functions.f.variants.v.extra_body[1].pointer: "" is not a JSON Pointer to a field (it must start with "/")`
    ])
  })
})

describe("buildConfig: references between functions, variants and models", () => {
  it("refuses a variant naming a model that is not defined", () => {
    const message = onlyError(buildErrors(chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
model = "gpt-5"
`)), "functions.f.variants.v.model")
    expect(message).toMatch(/^unknown model "gpt-5"/)
  })

  it("refuses a short-hand of an unknown provider type", () => {
    const message = onlyError(buildErrors(chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
model = "nosuchprovider::x"
`)), "functions.f.variants.v.model")
    expect(message).toMatch(/^unknown model "nosuchprovider::x"/)
  })

  it("accepts short-hand models openai::gpt-4o (with its key) and dummy::x (no key needed)", () => {
    const config = buildOk(chatFunction(`
[functions.f.variants.a]
type = "chat_completion"
model = "openai::gpt-4o"
[functions.f.variants.b]
type = "chat_completion"
model = "dummy::x"
`), { env: { OPENAI_API_KEY: "sk-1" } })
    expect(variantOf(config, "f", "a").model).toBe("openai::gpt-4o")
    expect(variantOf(config, "f", "b").model).toBe("dummy::x")
    // short-hands are not added to [models]
    expect(config.models.size).toBe(0)
  })

  it("with dummy_shorthands = false, refuses a variant naming a dummy:: short-hand, and takes a configured dummy model", () => {
    const message = onlyError(buildErrors(`
[gateway]
dummy_shorthands = false
${chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
model = "dummy::echo_request_messages"
`)}`), "functions.f.variants.v.model")
    expect(message).toBe(`model "dummy::echo_request_messages": the "dummy::" short-hands are off ([gateway] dummy_shorthands = false): configure a model of type "dummy" under [models] instead`)
    const config = buildOk(`
[gateway]
dummy_shorthands = false
[models.echo]
routing = ["dummy"]
[models.echo.providers.dummy]
type = "dummy"
model_name = "echo_request_messages"
${chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
model = "echo"
`)}`)
    expect(config.gateway.dummyShorthands).toBe(false)
    expect(config.shorthands.has("dummy")).toBe(false)
    expect(config.shorthands.has("openai")).toBe(true)
  })

  it("requires a model on a chat_completion variant", () => {
    onlyError(buildErrors(chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
`)), "functions.f.variants.v.model")
  })

  it("refuses variant types it does not know, naming those it does, and a variant without type", () => {
    const errors = buildErrors(chatFunction(`
[functions.f.variants.a]
type = "experimental_best_of_everything"
model = "dummy::x"
[functions.f.variants.b]
model = "dummy::x"
`))
    expect(errorAt(errors, "functions.f.variants.a.type")).toMatch(/experimental_best_of_everything.*experimental_best_of_n_sampling/)
    expect(errorAt(errors, "functions.f.variants.b.type")).toBe("missing field")
  })

  it("refuses a function name in the reserved gateway:: namespace", () => {
    onlyError(buildErrors(`
[functions."gateway::mine"]
type = "chat"
`), `functions."gateway::mine"`)
  })

  it("refuses a function type other than chat or json", () => {
    onlyError(buildErrors(`
[functions.f]
type = "completion"
`), "functions.f.type")
  })
})

describe("buildConfig: schemas and templates", () => {
  const files = {
    "/cfg/schemas/user.json": userSchema,
    "/cfg/templates/user.minijinja": "Hello {{ name }}"
  }

  it("refuses a variant without the template of a schema the function declares", () => {
    const errors = buildErrors(chatFunction(
      dummyVariant("good", `templates.user.path = "templates/user.minijinja"`) + dummyVariant("bad"),
      `schemas.user.path = "schemas/user.json"`
    ), { files })
    const message = onlyError(errors, "functions.f.variants.bad")
    expect(message).toContain("schemas.user")
    expect(message).toContain(`template "user"`)
  })

  it("accepts a schema with a custom name when every variant has that template", () => {
    const config = buildOk(chatFunction(
      dummyVariant("v", `templates.greeting.path = "templates/user.minijinja"`),
      `schemas.greeting.path = "schemas/user.json"`
    ), { files })
    expect([...functionOf(config, "f").schemas.keys()]).toEqual(["greeting"])
    expect([...variantOf(config, "f", "v").templates.keys()]).toEqual(["greeting"])
  })

  it("reports a missing template file with its absolute path", () => {
    const message = onlyError(
      buildErrors(chatFunction(dummyVariant("v", `templates.user.path = "templates/missing.minijinja"`))),
      "functions.f.variants.v.templates.user.path"
    )
    expect(message).toBe("template file not found: /cfg/templates/missing.minijinja")
  })

  it("reports a missing schema file with its absolute path", () => {
    const message = onlyError(
      buildErrors(`
[functions.f]
type = "chat"
schemas.user.path = "../elsewhere/user.json"
`),
      "functions.f.schemas.user.path"
    )
    expect(message).toBe("schema file not found: /elsewhere/user.json")
  })

  it("reports a schema file that is not JSON", () => {
    const message = onlyError(
      buildErrors(`
[functions.f]
type = "chat"
schemas.user.path = "user.json"
`, { files: { "/cfg/user.json": "{ not json" } }),
      "functions.f.schemas.user.path"
    )
    expect(message).toMatch(/^schema file \/cfg\/user\.json is not valid JSON/)
  })

  it("reports a schema that is not a valid JSON Schema", () => {
    const message = onlyError(
      buildErrors(`
[functions.f]
type = "chat"
schemas.user.path = "user.json"
`, { files: { "/cfg/user.json": json({ type: "nonsense" }) } }),
      "functions.f.schemas.user.path"
    )
    expect(message).toMatch(/^invalid JSON Schema in \/cfg\/user\.json: /)
  })

  it("reports a template syntax error with the file, key path and template file", () => {
    const errors = buildErrors(
      chatFunction(dummyVariant("v", `templates.user.path = "t.minijinja"`)),
      { files: { "/cfg/t.minijinja": "Hello {{ name " } }
    )
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(
      /^\/cfg\/gateway\.toml: functions\.f\.variants\.v\.templates\.user\.path: \/cfg\/t\.minijinja: template syntax error: /
    )
  })

  it("refuses an output_schema on a chat function", () => {
    onlyError(
      buildErrors(chatFunction(dummyVariant("v"), `output_schema = "out.json"`), { files: { "/cfg/out.json": "{}" } }),
      "functions.f.output_schema"
    )
  })

  it("reads the output schema of a json function", () => {
    const config = buildOk(`
[functions.j]
type = "json"
output_schema = "out.json"
[functions.j.variants.v]
type = "chat_completion"
model = "dummy::json"
`, { files: { "/cfg/out.json": json({ type: "object", required: ["answer"] }) } })
    const schema = functionOf(config, "j").outputSchema!
    expect(schema.validate({ answer: 1 })).toBeUndefined()
    expect(schema.validate({})).toBeDefined()
  })
})

describe("buildConfig: legacy template and schema fields", () => {
  const files = {
    "/cfg/system.json": systemSchema,
    "/cfg/user.json": userSchema,
    "/cfg/system.minijinja": "Be {{ tone }}.",
    "/cfg/user.minijinja": "Hi {{ name }}",
    "/cfg/assistant.minijinja": "Sure."
  }

  it("maps system_template/user_template/assistant_template and system_schema/user_schema to templates and schemas", () => {
    const config = buildOk(`
[functions.f]
type = "chat"
system_schema = "system.json"
user_schema = "user.json"
[functions.f.variants.v]
type = "chat_completion"
model = "dummy::x"
system_template = "system.minijinja"
user_template = "user.minijinja"
assistant_template = "assistant.minijinja"
`, { files })
    const fn = functionOf(config, "f")
    expect([...fn.schemas.keys()].sort()).toEqual(["system", "user"])
    expect(fn.schemas.get("system")!.validate({})).toBeDefined()
    const variant = variantOf(config, "f", "v")
    expect([...variant.templates.keys()].sort()).toEqual(["assistant", "system", "user"])
    expect(config.templates.render(variant.templates.get("system")!, { tone: "brief" })).toEqual({ text: "Be brief." })
    expect(config.templates.render(variant.templates.get("user")!, { name: "Ada" })).toEqual({ text: "Hi Ada" })
  })

  it("refuses a legacy schema field together with its new form", () => {
    const errors = buildErrors(`
[functions.f]
type = "chat"
user_schema = "user.json"
schemas.user.path = "user.json"
`, { files })
    expect(onlyError(errors, "functions.f.user_schema")).toContain("schemas.user")
  })

  it("refuses a legacy template field together with its new form", () => {
    const errors = buildErrors(chatFunction(dummyVariant("v", `
system_template = "system.minijinja"
templates.system.path = "system.minijinja"
`)), { files })
    expect(onlyError(errors, "functions.f.variants.v.system_template")).toContain("templates.system")
  })
})

describe("buildConfig: weights", () => {
  it("refuses a negative weight", () => {
    const message = onlyError(buildErrors(chatFunction(dummyVariant("v", "weight = -0.5"))), "functions.f.variants.v.weight")
    expect(message).toContain("-0.5")
  })

  it("gives every variant weight 1 when no variant has a weight", () => {
    const config = buildOk(chatFunction(dummyVariant("a") + dummyVariant("b")))
    expect(variantOf(config, "f", "a").weight).toBe(1)
    expect(variantOf(config, "f", "b").weight).toBe(1)
  })

  it("gives unweighted variants weight 0 when some variant has a weight", () => {
    const config = buildOk(chatFunction(dummyVariant("a", "weight = 0.3") + dummyVariant("b") + dummyVariant("c", "weight = 2")))
    expect(variantOf(config, "f", "a").weight).toBe(0.3)
    expect(variantOf(config, "f", "b").weight).toBe(0)
    expect(variantOf(config, "f", "c").weight).toBe(2)
  })
})

describe("buildConfig: credentials", () => {
  const openAiVariant = (weight: string) => chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
model = "openai::gpt-4o"
${weight}
`)

  it("refuses a short-hand model whose provider's key is missing, when the variant can be sampled", () => {
    const message = onlyError(buildErrors(openAiVariant("")), "functions.f.variants.v.model")
    expect(message).toContain("OPENAI_API_KEY")
    expect(message).toContain(`"openai::gpt-4o"`)
  })

  it("does not require the key of a model used only by weight-0 variants", () => {
    const config = buildOk(openAiVariant("weight = 0") + dummyVariant("other", "weight = 1"))
    expect(variantOf(config, "f", "v").weight).toBe(0)
  })

  it("treats an empty environment variable as missing", () => {
    onlyError(buildErrors(openAiVariant(""), { env: { OPENAI_API_KEY: "" } }), "functions.f.variants.v.model")
  })

  it("checks every provider of a configured model, with api_key_location env::NAME", () => {
    const toml = `
[models.m]
routing = ["a", "b"]
[models.m.providers.a]
type = "dummy"
model_name = "hello"
[models.m.providers.b]
type = "openai"
model_name = "gpt-4o"
api_key_location = "env::MY_KEY"
` + chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
model = "m"
`)
    const message = onlyError(buildErrors(toml, { env: { OPENAI_API_KEY: "unused" } }), "functions.f.variants.v.model")
    expect(message).toContain("MY_KEY")
    expect(message).toContain(`provider "b"`)
    const config = buildOk(toml, { env: { MY_KEY: "k" } })
    expect(config.models.get("m")!.providers.get("b")!.credential).toEqual({ kind: "static", value: "k" })
  })

  it("accepts dynamic:: and none credential locations without any environment variable", () => {
    const config = buildOk(`
[models.m]
routing = ["a", "b"]
[models.m.providers.a]
type = "openai"
model_name = "gpt-4o"
api_key_location = "dynamic::customer_key"
[models.m.providers.b]
type = "openai"
model_name = "gpt-4o"
api_key_location = "none"
` + chatFunction(`
[functions.f.variants.v]
type = "chat_completion"
model = "m"
`))
    expect(config.models.get("m")!.providers.get("a")!.credential).toEqual({ kind: "dynamic", name: "customer_key" })
    expect(config.models.get("m")!.providers.get("b")!.credential).toEqual({ kind: "none" })
  })

  it("refuses a malformed api_key_location", () => {
    const message = onlyError(buildErrors(`
[models.m]
routing = ["a"]
[models.m.providers.a]
type = "openai"
model_name = "gpt-4o"
api_key_location = "OPENAI_API_KEY"
`), "models.m.providers.a.api_key_location")
    expect(message).toContain("OPENAI_API_KEY")
  })
})

describe("buildConfig: models and providers", () => {
  it("refuses an unknown provider type, listing the known ones", () => {
    const message = onlyError(buildErrors(`
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "skynet"
model_name = "x"
`), "models.m.providers.p.type")
    expect(message).toContain(`"skynet"`)
    expect(message).toContain("openai")
    expect(message).toContain("dummy")
  })

  it("refuses a provider without type or model_name", () => {
    const errors = buildErrors(`
[models.m]
routing = ["p", "q"]
[models.m.providers.p]
model_name = "x"
[models.m.providers.q]
type = "openai"
`)
    expect(errorAt(errors, "models.m.providers.p.type")).toBe("missing field")
    expect(errorAt(errors, "models.m.providers.q.model_name")).toBe("missing field")
  })

  it("refuses routing that names an undefined provider", () => {
    const message = onlyError(buildErrors(`
[models.m]
routing = ["p", "ghost"]
[models.m.providers.p]
type = "dummy"
model_name = "x"
`), "models.m.routing[1]")
    expect(message).toContain(`"ghost"`)
  })

  it("refuses a provider that routing does not list", () => {
    const message = onlyError(buildErrors(`
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "dummy"
model_name = "x"
[models.m.providers.unused]
type = "dummy"
model_name = "y"
`), "models.m.providers.unused")
    expect(message).toContain("routing")
  })

  it("refuses an empty routing", () => {
    onlyError(buildErrors(`
[models.m]
routing = []
providers = {}
`), "models.m.routing")
  })

  it("refuses model names that look like short-hands or use the gateway:: prefix", () => {
    const errors = buildErrors(`
[models."openai::gpt-4o"]
routing = ["p"]
[models."openai::gpt-4o".providers.p]
type = "dummy"
model_name = "x"
[models."dummy::x"]
routing = ["p"]
[models."dummy::x".providers.p]
type = "dummy"
model_name = "x"
[models."gateway::m"]
routing = ["p"]
[models."gateway::m".providers.p]
type = "dummy"
model_name = "x"
`)
    expect(errors).toHaveLength(3)
    expect(errorAt(errors, `models."openai::gpt-4o"`)).toContain("reserved")
    expect(errorAt(errors, `models."dummy::x"`)).toContain("reserved")
    expect(errorAt(errors, `models."gateway::m"`)).toContain("reserved")
  })

  it("accepts a model name with :: when the part before is not a provider type", () => {
    const config = buildOk(`
[models."team::chat"]
routing = ["p"]
[models."team::chat".providers.p]
type = "dummy"
model_name = "x"
`)
    expect(config.models.has("team::chat")).toBe(true)
  })
})

describe("buildConfig: unknown keys", () => {
  it("refuses an unknown top-level key", () => {
    expect(onlyError(buildErrors(`colour = "blue"\n`), "colour")).toBe("unknown field")
  })

  it("refuses an unknown key under [gateway]", () => {
    expect(onlyError(buildErrors(`[gateway]\nbind_adress = "0.0.0.0:1"\n`), "gateway.bind_adress")).toBe("unknown field")
  })

  it("reports an unknown key under [gateway] together with the other problems", () => {
    const errors = buildErrors(`
[gateway]
debgu = true
[metrics.demonstration]
type = "float"
level = "inference"
`)
    expect(errors).toHaveLength(2)
    expect(errorAt(errors, "gateway.debgu")).toBe("unknown field")
    errorAt(errors, "metrics.demonstration")
  })

  it("refuses an unknown key in a function", () => {
    expect(onlyError(buildErrors(chatFunction(dummyVariant("v"), `temprature = 1`)), "functions.f.temprature")).toBe("unknown field")
  })

  it("refuses an unknown key in a variant", () => {
    expect(onlyError(buildErrors(chatFunction(dummyVariant("v", `temprature = 1`))), "functions.f.variants.v.temprature")).toBe(
      "unknown field"
    )
  })

  it("refuses an unknown key in a model and in a provider", () => {
    const errors = buildErrors(`
[models.m]
routing = ["p"]
fallback = true
[models.m.providers.p]
type = "openai"
model_name = "x"
api_bas = "http://localhost"
`)
    expect(errorAt(errors, "models.m.fallback")).toBe("unknown field")
    // the provider's table is only checked once the model table is valid
    const providerErrors = buildErrors(`
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "openai"
model_name = "x"
api_bas = "http://localhost"
`)
    expect(onlyError(providerErrors, "models.m.providers.p.api_bas")).toBe("unknown field")
  })

  it("refuses an unknown key in a tool and in a metric", () => {
    const errors = buildErrors(`
[tools.t]
description = "d"
parameters = "t.json"
paramters = "t.json"
[metrics.m]
type = "float"
level = "inference"
optimise = "max"
`, { files: { "/cfg/t.json": weatherParams } })
    expect(errors).toHaveLength(2)
    expect(errorAt(errors, "tools.t.paramters")).toBe("unknown field")
    expect(errorAt(errors, "metrics.m.optimise")).toBe("unknown field")
  })

  it("refuses a wrongly typed value, naming its key", () => {
    expect(onlyError(buildErrors(chatFunction(dummyVariant("v", `temperature = "hot"`))), "functions.f.variants.v.temperature"))
      .toContain(`"hot"`)
  })
})

describe("buildConfig: metrics", () => {
  it("parses metrics, defaulting optimize to max", () => {
    const config = buildOk(`
[metrics.accuracy]
type = "float"
level = "inference"
optimize = "min"
[metrics.solved]
type = "boolean"
level = "episode"
`)
    expect(config.metrics.get("accuracy")).toEqual({ name: "accuracy", type: "float", level: "inference", optimize: "min" })
    expect(config.metrics.get("solved")).toEqual({ name: "solved", type: "boolean", level: "episode", optimize: "max" })
  })

  it("refuses the reserved metric names comment and demonstration", () => {
    const errors = buildErrors(`
[metrics.comment]
type = "boolean"
level = "inference"
[metrics.demonstration]
type = "boolean"
level = "inference"
`)
    expect(errors).toHaveLength(2)
    expect(errorAt(errors, "metrics.comment")).toContain("reserved")
    expect(errorAt(errors, "metrics.demonstration")).toContain("reserved")
  })

  it("refuses a metric with an invalid level", () => {
    onlyError(buildErrors(`
[metrics.m]
type = "boolean"
level = "session"
`), "metrics.m.level")
  })
})

describe("buildConfig: tools", () => {
  const files = { "/cfg/tools/weather.json": weatherParams }

  it("reads each tool's parameters file, named by its key unless name is set", () => {
    const config = buildOk(`
[tools.weather]
description = "Weather"
parameters = "tools/weather.json"
[tools.alias]
name = "get_weather_v2"
description = "Weather again"
parameters = "tools/weather.json"
`, { files })
    expect(config.tools.get("weather")!.name).toBe("weather")
    expect(config.tools.get("weather")!.strict).toBe(false)
    expect(config.tools.get("alias")!.name).toBe("get_weather_v2")
    expect(config.tools.get("alias")!.parameters).toEqual(JSON.parse(weatherParams))
  })

  it("reports a missing parameters file under the tool's parameters key", () => {
    expect(onlyError(buildErrors(`
[tools.weather]
description = "Weather"
parameters = "tools/nope.json"
`), "tools.weather.parameters")).toBe("schema file not found: /cfg/tools/nope.json")
  })

  it("refuses a function listing a tool that is not defined", () => {
    expect(onlyError(buildErrors(chatFunction(dummyVariant("v"), `tools = ["ghost"]`)), "functions.f.tools[0]")).toContain(`"ghost"`)
  })

  it("accepts tool_choice.specific naming a tool the function does not list (it must come with each request)", () => {
    const config = buildOk(`
[tools.weather]
description = "Weather"
parameters = "tools/weather.json"
[tools.other]
name = "other_tool"
description = "Other"
parameters = "tools/weather.json"
` + chatFunction(dummyVariant("v"), `tools = ["weather"]\ntool_choice = { specific = "other" }`) + `
[functions.g]
type = "chat"
tool_choice = { specific = "brought_by_the_request" }
[functions.g.variants.v]
type = "chat_completion"
model = "dummy::hello"
`, { files })
    // a configured tool is chosen by the name the model sees
    expect(functionOf(config, "f").toolChoice).toEqual({ type: "specific", name: "other_tool" })
    expect(functionOf(config, "g").toolChoice).toEqual({ type: "specific", name: "brought_by_the_request" })
  })

  it("accepts tool_choice.specific naming one of the function's tools", () => {
    const config = buildOk(`
[tools.weather]
description = "Weather"
parameters = "tools/weather.json"
` + chatFunction(dummyVariant("v"), `tools = ["weather"]\ntool_choice = { specific = "weather" }`), { files })
    expect(functionOf(config, "f").toolChoice).toEqual({ type: "specific", name: "weather" })
  })

  it("defaults a chat function's tool_choice to auto", () => {
    expect(functionOf(buildOk(chatFunction(dummyVariant("v"))), "f").toolChoice).toEqual({ type: "auto" })
  })

  it("refuses tools, tool_choice and parallel_tool_calls on a json function", () => {
    const errors = buildErrors(`
[tools.weather]
description = "Weather"
parameters = "tools/weather.json"
[functions.j]
type = "json"
tools = ["weather"]
tool_choice = "required"
parallel_tool_calls = true
[functions.j.variants.v]
type = "chat_completion"
model = "dummy::json"
`, { files })
    expect(errors).toHaveLength(3)
    expect(errorAt(errors, "functions.j.tools")).toContain("json functions")
    expect(errorAt(errors, "functions.j.tool_choice")).toContain("json functions")
    expect(errorAt(errors, "functions.j.parallel_tool_calls")).toContain("json functions")
  })
})

describe("buildConfig: json_mode defaults", () => {
  const jsonFunction = (extra: string, variantExtra = "") => `
[functions.j]
type = "json"
${extra}
[functions.j.variants.v]
type = "chat_completion"
model = "dummy::json"
${variantExtra}
`
  const files = { "/cfg/out.json": json({ type: "object" }) }

  it("is strict for a json function with an output schema", () => {
    expect(variantOf(buildOk(jsonFunction(`output_schema = "out.json"`), { files }), "j", "v").jsonMode).toBe("strict")
  })

  it("is on for a json function without an output schema", () => {
    expect(variantOf(buildOk(jsonFunction("")), "j", "v").jsonMode).toBe("on")
  })

  it("is off for a chat function", () => {
    expect(variantOf(buildOk(chatFunction(dummyVariant("v"))), "f", "v").jsonMode).toBe("off")
  })

  it("keeps the json_mode a variant sets, and refuses an unknown one", () => {
    expect(variantOf(buildOk(jsonFunction(`output_schema = "out.json"`, `json_mode = "tool"`), { files }), "j", "v").jsonMode).toBe("tool")
    onlyError(buildErrors(jsonFunction("", `json_mode = "maybe"`)), "functions.j.variants.v.json_mode")
  })
})

describe("buildConfig: bind address", () => {
  it("reads gateway.bind_address", () => {
    expect(buildOk(`[gateway]\nbind_address = "127.0.0.1:8080"\n`).gateway.bindAddress).toEqual({ host: "127.0.0.1", port: 8080 })
  })

  it("lets GATEWAY_BIND_ADDRESS override the configuration", () => {
    const config = buildOk(`[gateway]\nbind_address = "127.0.0.1:8080"\n`, { env: { GATEWAY_BIND_ADDRESS: "[::1]:9000" } })
    expect(config.gateway.bindAddress).toEqual({ host: "::1", port: 9000 })
  })

  it("refuses a bad gateway.bind_address, naming the key", () => {
    expect(onlyError(buildErrors(`[gateway]\nbind_address = "localhost"\n`), "gateway.bind_address")).toContain(`"localhost"`)
  })

  it("refuses a bad GATEWAY_BIND_ADDRESS, naming the variable", () => {
    const errors = buildErrors(``, { env: { GATEWAY_BIND_ADDRESS: "0.0.0.0:99999" } })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain("GATEWAY_BIND_ADDRESS")
    expect(errors[0]).toContain(`"0.0.0.0:99999"`)
  })

  it("parses host:port pairs", () => {
    expect(parseBindAddress("0.0.0.0:3000")).toEqual({ host: "0.0.0.0", port: 3000 })
    expect(parseBindAddress("[::]:80")).toEqual({ host: "::", port: 80 })
    expect(parseBindAddress("localhost:65535")).toEqual({ host: "localhost", port: 65535 })
    expect(parseBindAddress("localhost:65536")).toBeUndefined()
    expect(parseBindAddress(":3000")).toBeUndefined()
    expect(parseBindAddress("host")).toBeUndefined()
  })
})

describe("buildConfig: template_filesystem_access", () => {
  const withInclude = (gateway: string) => `
[gateway]
${gateway}
` + chatFunction(dummyVariant("v", `templates.system.path = "templates/system.minijinja"`))

  const files = {
    "/cfg/templates/system.minijinja": `{% include "partials/rules.minijinja" %} Be nice.`,
    "/cfg/partials/rules.minijinja": "Rule one.",
    "/shared/partials/rules.minijinja": "Shared rule.",
    "/cfg/shared/partials/rules.minijinja": "Relative shared rule."
  }

  const renderSystem = (gateway: string): string => {
    const config = buildOk(withInclude(gateway), { files })
    const rendered = config.templates.render(templateKey("f", "v", "system"), {})
    if ("error" in rendered) throw new Error(rendered.error)
    return rendered.text
  }

  it("refuses {% include %} when filesystem access is off (the default)", () => {
    for (const gateway of ["", "template_filesystem_access = false", "template_filesystem_access = { enabled = false }"]) {
      const message = onlyError(buildErrors(withInclude(gateway), { files }), "functions.f.variants.v.templates.system.path")
      expect(message).toContain("partials/rules.minijinja")
      expect(message).toContain("template_filesystem_access")
    }
  })

  it("loads included files relative to the configuration file when enabled as a boolean", () => {
    expect(renderSystem("template_filesystem_access = true")).toBe("Rule one. Be nice.")
  })

  it("loads included files from base_path when enabled as a table", () => {
    expect(renderSystem(`template_filesystem_access = { enabled = true, base_path = "/shared" }`)).toBe("Shared rule. Be nice.")
    // a relative base_path is relative to the configuration file
    expect(renderSystem(`template_filesystem_access = { enabled = true, base_path = "shared" }`)).toBe("Relative shared rule. Be nice.")
    expect(buildOk(withInclude(`template_filesystem_access = { enabled = true }`), { files }).gateway.templateFilesystemAccess).toBe(true)
  })

  it("reports an included file that does not exist", () => {
    const message = onlyError(
      buildErrors(withInclude(`template_filesystem_access = { enabled = true, base_path = "/nowhere" }`), { files }),
      "functions.f.variants.v.templates.system.path"
    )
    expect(message).toContain("/nowhere/partials/rules.minijinja")
  })

  const includeErrors = (include: string, realPath?: (path: string) => string | undefined) => {
    const result = buildConfig({
      sources: [{ path: configPath, text: withInclude(`template_filesystem_access = { base_path = "/cfg/partials" }`) }],
      readFile: (path) =>
        ({
          ...files,
          "/cfg/templates/system.minijinja": `{% include "${include}" %}`,
          "/etc/passwd": "root:x:0:0",
          "/srv/partials/rules.minijinja": "Rule one."
        })[path],
      realPath,
      env: {}
    })
    return "errors" in result ? result.errors : []
  }

  it("refuses include names that leave base_path: absolute, with a segment starting with a dot, with a backslash", () => {
    const refused = {
      "/etc/passwd": "an absolute path is refused",
      "../../etc/passwd": `a path segment starting with "." (such as "..") is refused`,
      "rules/../../../etc/passwd": `a path segment starting with "." (such as "..") is refused`,
      ".hidden": `a path segment starting with "." (such as "..") is refused`
    }
    for (const [include, why] of Object.entries(refused)) {
      const errors = includeErrors(include)
      expect(errors, include).toHaveLength(1)
      expect(errors[0]).toContain(`loads "${include}": ${why}; included templates are named by a path below /cfg/partials`)
    }
    expect(includeErrors("rules.minijinja")).toEqual([])
    // (a name with a backslash is no file name: the template's string literal never holds one unescaped)
    expect(includedNameProblem("..\\etc\\passwd")).toBe("a backslash is refused")
  })

  it("refuses an included file that a link takes out of base_path, and follows links that stay inside", () => {
    const links: Record<string, string> = { "/cfg/partials/out.minijinja": "/etc/passwd", "/cfg/partials/in.minijinja": "/cfg/partials/rules.minijinja" }
    const realPath = (path: string) => links[path] ?? path
    const errors = includeErrors("out.minijinja", realPath)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain(`loads "out.minijinja", which resolves through a link to /etc/passwd, outside /cfg/partials: refused`)
    expect(includeErrors("in.minijinja", realPath)).toEqual([])
    // a base_path that is itself a link is compared by where it leads
    const movedBase = (path: string) => path.replace(/^\/cfg\/partials/, "/srv/partials")
    expect(includeErrors("rules.minijinja", movedBase)).toEqual([])
  })
})
