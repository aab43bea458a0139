/**
 * The real `gateway` command serving: the ways to give it a configuration (file, glob,
 * --config-path, --default-config), where it listens, its log format, and how it stops.
 */
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dummyHelloText } from "../../src/providers/dummy/index.ts"
import { rawRequest, type RunningGateway, runGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { freePort } from "../../scripts/ports.ts"


/** the system prompt and messages `dummy::echo_request_messages` saw */
const echoed = (body: any): { system: string | null; messages: Array<any> } => {
  expect(body.content, JSON.stringify(body)).toHaveLength(1)
  expect(body.content[0].type).toBe("text")
  return JSON.parse(body.content[0].text)
}

const greetConfig = `
[functions.greet]
type = "chat"
[functions.greet.variants.only]
type = "chat_completion"
model = "dummy::hello"
`
const greet = { function_name: "greet", input: { messages: [{ role: "user", content: "hi" }] } }

describe("--config-path", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: greetConfig, args: ["--config-path", "config.toml"] })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("loads the configuration like --config-file", async () => {
    const response = await gateway.post("/inference", greet)
    expect(response.status).toBe(200)
    expect(response.body.variant_name).toBe("only")
    expect(response.body.content).toEqual([{ type: "text", text: dummyHelloText }])
  })
})

describe("--config-file with a glob", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({
      config: "# not matched by the glob below\n",
      files: {
        "conf/functions/greet.toml": `
[functions.greet]
type = "chat"
[functions.greet.variants.v]
type = "chat_completion"
model = "echo_model"
weight = 1
templates.system.path = "system.minijinja"
templates.user.path = "../shared/user.minijinja"
`,
        "conf/models.toml": `
[models.echo_model]
routing = ["only"]
[models.echo_model.providers.only]
type = "dummy"
model_name = "echo_request_messages"
`,
        "conf/nested/deeper/other.toml": `
[functions.other]
type = "chat"
schemas.system.path = "system.schema.json"
[functions.other.variants.v]
type = "chat_completion"
model = "echo_model"
templates.system.path = "system.minijinja"

# a variant of greet, defined in another file than greet itself
[functions.greet.variants.elsewhere]
type = "chat_completion"
model = "echo_model"
weight = 0
templates.system.path = "system.minijinja"
templates.user.path = "user.minijinja"
`,
        "conf/nested/deeper/system.schema.json": JSON.stringify({
          type: "object",
          properties: { topic: { type: "string" } },
          required: ["topic"]
        }),
        "conf/nested/deeper/user.minijinja": "Nested user template: {{ text }}",
        // the same name in several folders: each file's own folder must win
        "conf/functions/system.minijinja": "System prompt of greet",
        "conf/nested/deeper/system.minijinja": "System prompt of other{% if topic is defined %} about {{ topic }}{% endif %}",
        "conf/system.minijinja": "wrong: the folder of the glob",
        "system.minijinja": "wrong: the working directory",
        "conf/shared/user.minijinja": "User says: {{ text }}"
      },
      args: ["--config-file", "conf/**/*.toml"]
    })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("merges every matching file", async () => {
    const [greetResponse, otherResponse] = await Promise.all([
      gateway.post("/inference", { function_name: "greet", input: {} }),
      gateway.post("/inference", { function_name: "other", input: { system: { topic: "rain" } } })
    ])
    expect(greetResponse.status).toBe(200)
    expect(otherResponse.status).toBe(200)
  })

  it("resolves template paths against the folder of the file that names them", async () => {
    const greetResponse = await gateway.post("/inference", {
      function_name: "greet",
      input: { messages: [{ role: "user", content: [{ type: "text", arguments: { text: "hello" } }] }] }
    })
    expect(greetResponse.status).toBe(200)
    expect(echoed(greetResponse.body)).toEqual({
      system: "System prompt of greet",
      messages: [{ role: "user", content: [{ type: "text", text: "User says: hello" }] }]
    })
    const otherResponse = await gateway.post("/inference", { function_name: "other", input: { system: { topic: "rain" } } })
    expect(echoed(otherResponse.body).system).toBe("System prompt of other about rain")
    // the variant of greet written in the nested file uses the nested file's folder
    const elsewhere = await gateway.post("/inference", {
      function_name: "greet",
      variant_name: "elsewhere",
      input: { messages: [{ role: "user", content: [{ type: "text", arguments: { text: "hello" } }] }] }
    })
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200)
    expect(echoed(elsewhere.body)).toEqual({
      system: "System prompt of other",
      messages: [{ role: "user", content: [{ type: "text", text: "Nested user template: hello" }] }]
    })
  })

  it("resolves schema paths against the folder of the file that names them", async () => {
    const response = await gateway.post("/inference", { function_name: "other", input: { system: { subject: "rain" } } })
    expect(response.status).toBe(400)
    expect(response.body.error).toMatch(/^input\.system: .*topic/)
  })
})

describe("--config-file with a glob whose files define the same key", () => {
  it("fails naming both files and the key", async () => {
    const dir = writeFiles({
      "conf/a.toml": `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "dummy"
model_name = "hello"
`,
      "conf/b.toml": `
[models.m.providers.p]
type = "dummy"
model_name = "echo_request_messages"
`
    })
    const result = await runGateway(["--config-file", "conf/*.toml"], { cwd: dir, env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" } })
    expect(result.code).toBe(1)
    const a = path.join(dir, "conf/a.toml")
    const b = path.join(dir, "conf/b.toml")
    const lines = result.stderr.split("\n").filter((line) => line.includes("defined twice"))
    // type and model_name of models.m.providers.p are each defined in both files
    expect(lines.length).toBeGreaterThanOrEqual(1)
    for (const line of lines) {
      expect(line).toContain(a)
      expect(line).toContain(b)
      expect(line).toMatch(/models\.m\.providers\.p\.(type|model_name)/)
    }
    expect(result.stderr).not.toContain("Listening on")
  })
})

describe("--default-config", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ args: ["--default-config"] })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("serves short-hand models: dummy::echo_request_messages answers with what it received", async () => {
    const response = await gateway.post("/inference", {
      model_name: "dummy::echo_request_messages",
      input: { system: "Be brief.", messages: [{ role: "user", content: "Hello there" }] }
    })
    expect(response.status).toBe(200)
    expect(response.body.variant_name).toBe("dummy::echo_request_messages")
    expect(echoed(response.body)).toEqual({
      system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hello there" }] }]
    })
  })

  it("has no functions of its own", async () => {
    const response = await gateway.post("/inference", greet)
    expect(response.status).toBe(404)
    expect(response.body.error).toContain("greet")
  })
})

describe("where the gateway listens", () => {
  const config = (port: number) => `
[gateway]
bind_address = "127.0.0.1:${port}"
${greetConfig}
`

  it("listens on [gateway] bind_address", async () => {
    const port = await freePort()
    const gateway = await startGateway({ config: config(port), env: { GATEWAY_BIND_ADDRESS: undefined } })
    try {
      expect(gateway.url).toBe(`http://127.0.0.1:${port}`)
      expect((await gateway.post("/inference", greet)).status).toBe(200)
    } finally {
      await gateway.stop()
    }
  })

  it("GATEWAY_BIND_ADDRESS overrides [gateway] bind_address", async () => {
    const port = await freePort()
    const gateway = await startGateway({ config: config(port), env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" } })
    try {
      expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(gateway.url).not.toBe(`http://127.0.0.1:${port}`)
      expect((await gateway.post("/inference", greet)).status).toBe(200)
      await expect(rawRequest(`http://127.0.0.1:${port}/status`)).rejects.toThrow(/ECONNREFUSED/)
    } finally {
      await gateway.stop()
    }
  })

  it("fails with one clear line when the address is taken", async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const { port } = blocker.address() as net.AddressInfo
    try {
      const result = await runGateway(["--default-config"], { env: { GATEWAY_BIND_ADDRESS: `127.0.0.1:${port}` } })
      expect(result.code).toBe(1)
      // besides the start-up log line, one line says what is wrong, without a stack trace
      const lines = result.stderr.trim().split("\n").filter((line) => !/^\[[0-9:.]+\] INFO/.test(line))
      expect(lines).toEqual([expect.stringMatching(new RegExp(`EADDRINUSE.*127\\.0\\.0\\.1:${port}`))])
    } finally {
      blocker.close()
    }
  })

  it("--bind-address overrides GATEWAY_BIND_ADDRESS and [gateway] bind_address (both on a taken port)", async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const { port } = blocker.address() as net.AddressInfo
    try {
      const gateway = await startGateway({
        config: config(port),
        args: ["--config-file", "config.toml", "--bind-address", "127.0.0.1:0"],
        env: { GATEWAY_BIND_ADDRESS: `127.0.0.1:${port}` }
      })
      try {
        expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
        expect(gateway.url).not.toBe(`http://127.0.0.1:${port}`)
        expect((await gateway.post("/inference", greet)).status).toBe(200)
      } finally {
        await gateway.stop()
      }
    } finally {
      blocker.close()
    }
  })

  it("refuses an invalid GATEWAY_BIND_ADDRESS, naming the variable", async () => {
    const dir = writeFiles({ "config.toml": greetConfig })
    const result = await runGateway(["--config-file", path.join(dir, "config.toml")], { env: { GATEWAY_BIND_ADDRESS: "nowhere" } })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/GATEWAY_BIND_ADDRESS: expected HOST:PORT, got "nowhere"/)
  })

  it("refuses an invalid bind_address, naming the key", async () => {
    const dir = writeFiles({ "config.toml": `[gateway]\nbind_address = "localhost"\n${greetConfig}` })
    const file = path.join(dir, "config.toml")
    const result = await runGateway(["--config-file", file], { env: { GATEWAY_BIND_ADDRESS: undefined } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`${file}: gateway.bind_address: expected HOST:PORT`)
  })
})

describe("--log-format json", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: greetConfig, args: ["--config-file", "config.toml", "--log-format", "json"] })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("writes every log line to stderr as one JSON object", async () => {
    expect((await gateway.post("/inference", greet)).status).toBe(200)
    const lines = gateway.log().split("\n").filter((line) => line.trim() !== "")
    expect(lines.length).toBeGreaterThan(0)
    const entries = lines.map((line) => JSON.parse(line))
    expect(entries.some((entry) => /^Listening on http:\/\//.test(String(entry.message)))).toBe(true)
    for (const entry of entries) expect(entry.level).toMatch(/^[A-Z]+$/)
  })
})

describe("a variant whose credential is missing", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({
      config: `
[models.gpt]
routing = ["openai"]
[models.gpt.providers.openai]
type = "openai"
model_name = "gpt-4o-mini"
api_key_location = "env::GATEWAY_TEST_SURELY_UNSET_KEY"

[functions.greet]
type = "chat"
[functions.greet.variants.main]
type = "chat_completion"
model = "dummy::hello"
weight = 1
[functions.greet.variants.keyless]
type = "chat_completion"
model = "gpt"
weight = 0
`,
      env: { GATEWAY_TEST_SURELY_UNSET_KEY: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("does not stop start-up when its weight is 0, and fails only when pinned", async () => {
    const sampled = await gateway.post("/inference", greet)
    expect(sampled.status).toBe(200)
    expect(sampled.body.variant_name).toBe("main")
    const pinned = await gateway.post("/inference", { ...greet, variant_name: "keyless" })
    expect(pinned.status).toBe(502)
    expect(pinned.body.error).toContain("GATEWAY_TEST_SURELY_UNSET_KEY")
  })
})

describe("SIGTERM", () => {
  it("lets the request in flight finish, refuses new connections, and exits 0", async () => {
    const gateway = await startGateway({ args: ["--default-config"] })
    const started = Date.now()
    const inFlight = rawRequest(gateway.url + "/inference", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model_name: "dummy::delay_500ms", input: { messages: [{ role: "user", content: "hi" }] } })
    })
    let answered = false
    void inFlight.then(() => (answered = true), () => (answered = true))
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(answered).toBe(false)
    const exited = gateway.stop("SIGTERM")

    // the listener closes at once, before the slow answer (500 ms) is ready
    let refused: unknown
    for (let attempt = 0; attempt < 50 && refused === undefined; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      await rawRequest(gateway.url + "/status").then(() => undefined, (error) => (refused = error))
    }
    // refused, or reset when the handshake raced the listener's close (queued, then dropped): never served
    expect(String(refused)).toMatch(/ECONNREFUSED|ECONNRESET/)
    expect(answered).toBe(false)

    const response = await inFlight
    expect(response.status).toBe(200)
    expect(JSON.parse(response.text).content).toEqual([{ type: "text", text: dummyHelloText }])
    expect(Date.now() - started).toBeGreaterThanOrEqual(450)
    expect(await exited).toBe(0)
  })

  it("exits promptly after a keep-alive request in flight, plain or streamed, has finished", async () => {
    const gateway = await startGateway({ args: ["--default-config"] })
    const slow = { model_name: "dummy::delay_500ms", input: { messages: [{ role: "user", content: "hi" }] } }
    // fetch keeps its connections alive: after the answer, they stay open unless the gateway ends them
    const plain = gateway.post("/inference", slow)
    const streamed = gateway.stream("/inference", { ...slow, stream: true })
    await new Promise((resolve) => setTimeout(resolve, 150))
    const signalled = Date.now()
    const exited = gateway.stop("SIGTERM")
    const [plainResponse, streamedResponse] = await Promise.all([plain, streamed])
    expect(plainResponse.status).toBe(200)
    expect(plainResponse.body.content).toEqual([{ type: "text", text: dummyHelloText }])
    expect(streamedResponse.status).toBe(200)
    expect(streamedResponse.events.at(-1)).toBe("[DONE]")
    expect(await exited).toBe(0)
    // not held up by the idle connections until the shutdown timeout (20 s)
    expect(Date.now() - signalled).toBeLessThan(3_000)
  })

  it("exits 0 at once when idle", async () => {
    const gateway = await startGateway({ args: ["--default-config"] })
    const started = Date.now()
    expect(await gateway.stop("SIGTERM")).toBe(0)
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})
