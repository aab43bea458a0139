/**
 * Hostile request input over real HTTP (issue 10): template arguments that broke the template
 * engine for every later request, filters deep or wide enough to overflow the stack, NUL
 * characters in filters, unsendable extra_headers and extra_body edits answered as provider
 * failures, and client-supplied field names written raw into the log. Each attack gets a 400
 * naming the field, and the gateway answers normally afterwards.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { repoRoot, runGateway, type RunningGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { backends, listInferences, observabilityToml, userInput, waitForInferences } from "../support/observability.ts"

const quickstart = path.join(repoRoot, "examples/quickstart")
const quickstartFile = (name: string) => fs.readFileSync(path.join(quickstart, name), "utf8")

/** `[[[ ... ]]]`, `depth` arrays deep, as JSON text (built as text: no deep object on the test's side) */
const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

/** the error message of a 400 */
const badRequest = (response: { status: number; body: any }): string => {
  expect(response.status, JSON.stringify(response.body)).toBe(400)
  expect(typeof response.body.error).toBe("string")
  return response.body.error
}

const upstreamModels = (apiBase: string) => `
[models.up]
routing = ["first", "second"]
[models.up.providers.first]
type = "openai"
model_name = "gpt-first"
api_base = "${apiBase}"
api_key_location = "none"
[models.up.providers.second]
type = "openai"
model_name = "gpt-second"
api_base = "${apiBase}"
api_key_location = "none"

# the first provider's own extra_body cannot be applied: a configuration problem, a provider failure
[models.misconfigured]
routing = ["first", "second"]
[models.misconfigured.providers.first]
type = "openai"
model_name = "gpt-first"
api_base = "${apiBase}"
api_key_location = "none"
extra_body = [{ pointer = "/model/x", value = 1 }]
[models.misconfigured.providers.second]
type = "openai"
model_name = "gpt-second"
api_base = "${apiBase}"
api_key_location = "none"

[functions.up_chat]
type = "chat"
[functions.up_chat.variants.only]
type = "chat_completion"
model = "up"

# the caller's key, from its request's credentials
[models.keyed]
routing = ["only"]
[models.keyed.providers.only]
type = "openai"
model_name = "gpt-keyed"
api_base = "${apiBase}"
api_key_location = "dynamic::upstream_key"
`

describe("hostile requests without a database", () => {
  let gateway: RunningGateway
  let fake: FakeOpenAi

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    // the quickstart (with template includes allowed), plus a function whose template multiplies a string by an argument
    const config = `${quickstartFile("config.toml").replace("[gateway]\n", "[gateway]\ntemplate_filesystem_access = true\n")}
[functions.ruler]
type = "chat"
[functions.ruler.variants.only]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.system.path = "functions/ruler/system.minijinja"

[functions.pairs]
type = "chat"
[functions.pairs.variants.only]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.system.path = "functions/pairs/system.minijinja"
${upstreamModels(fake.apiBase)}`
    gateway = await startGateway({
      config,
      files: {
        "functions/haiku/system.minijinja": quickstartFile("functions/haiku/system.minijinja"),
        "functions/haiku/user.minijinja": quickstartFile("functions/haiku/user.minijinja"),
        "functions/haiku/user_schema.json": quickstartFile("functions/haiku/user_schema.json"),
        "functions/extract_greeting/output_schema.json": quickstartFile("functions/extract_greeting/output_schema.json"),
        "functions/ruler/system.minijinja": `{% include "header.minijinja" %}{{ "-" * width }}`,
        "functions/pairs/system.minijinja": "{% for x in items %}{% for y in items %}({{ x }}, {{ y }}) {% endfor %}{% endfor %}",
        // includes are found from the folder of the configuration file
        "header.minijinja": "Ruler: "
      }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  /** the system prompt and messages the dummy echo model received */
  const echoed = (response: { status: number; body: any }) => {
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return JSON.parse(response.body.content[0].text)
  }
  const haiku = (topic: string) =>
    gateway.post("/inference", {
      function_name: "haiku",
      input: { messages: [{ role: "user", content: [{ type: "text", arguments: { topic } }] }] }
    })
  const expectHaikuRenders = async (topic: string) => {
    expect(echoed(await haiku(topic))).toEqual({
      system: "You are a poet who writes haiku.",
      messages: [{ role: "user", content: [{ type: "text", text: `Write a haiku about ${topic}.` }] }]
    })
  }

  describe("template arguments", () => {
    it("20 000 levels of nesting in schema-less system arguments: a 400 naming the limit, and templates still render", async () => {
      const body = `{"function_name":"haiku","input":{"system":{"x":${nestedArrays(20_000)}},"messages":[]}}`
      for (let attempt = 0; attempt < 2; attempt++) {
        expect(badRequest(await gateway.post("/inference", body))).toBe(
          "input.system.x: nests deeper than 128 levels, the limit of a request body"
        )
        await expectHaikuRenders("autumn")
      }
      // under the body's limit, over the arguments' one
      const deep = `{"function_name":"haiku","input":{"system":{"x":${nestedArrays(100)}},"messages":[]}}`
      expect(badRequest(await gateway.post("/inference", deep))).toBe("input.system: template arguments nest deeper than 64 levels")
      await expectHaikuRenders("autumn")
    })

    it("nesting at the limit renders; one level more is refused, in template blocks too", async () => {
      // the arguments object is level 1: x holds 63 more levels
      const atLimit = `{"function_name":"haiku","input":{"system":{"x":${nestedArrays(63)}},"messages":[]}}`
      expect(echoed(await gateway.post("/inference", atLimit)).system).toBe("You are a poet who writes haiku.")
      const tooDeep = `{"function_name":"ruler","input":{"system":{"width":1},"messages":[{"role":"user","content":[{"type":"template","name":"system","arguments":{"x":${
        nestedArrays(64)
      }}}]}]}}`
      expect(badRequest(await gateway.post("/inference", tooDeep))).toBe(
        "input.messages[0].content[0].arguments: template arguments nest deeper than 64 levels"
      )
    })

    it("more than 100 000 values in the arguments: a 400 naming the limit", async () => {
      const many = await gateway.post("/inference", {
        function_name: "haiku",
        input: { system: { x: new Array(100_000).fill(0) }, messages: [] }
      })
      expect(badRequest(many)).toBe("input.system: template arguments hold more than 100000 values")
      // 99 999 zeros, the array and the arguments object: exactly the limit
      const atLimit = await gateway.post("/inference", {
        function_name: "haiku",
        input: { system: { x: new Array(99_998).fill(0) }, messages: [] }
      })
      expect(echoed(atLimit).system).toBe("You are a poet who writes haiku.")
    })

    it("an engine failure within the limits (a string multiplied 3e9 times) is a 400, and the engine is rebuilt with its includes", async () => {
      const ruler = (width: number) => gateway.post("/inference", { function_name: "ruler", input: { system: { width }, messages: [] } })
      for (let attempt = 0; attempt < 2; attempt++) {
        expect(badRequest(await ruler(3e9))).toMatch(/^input\.system: template "system" failed to render: the template engine failed \(.+\); it has been restarted$/)
        await expectHaikuRenders("winter")
        expect(echoed(await ruler(3)).system).toBe("Ruler: ---")
      }
      // an ordinary template error is reported as it is
      expect(badRequest(await gateway.post("/inference", { function_name: "ruler", input: { system: { width: "x" }, messages: [] } }))).toBe(
        `input.system: template "system" failed to render: invalid operation: strings can only be multiplied with integers (in ruler::only::system:1)`
      )
      await expectHaikuRenders("spring")
    })

    it("a template looping over a long list inside a loop over it stops when its render runs out of fuel", async () => {
      const pairs = (items: ReadonlyArray<number>) => gateway.post("/inference", { function_name: "pairs", input: { system: { items }, messages: [] } })
      // 10^10 steps: hours of a blocked event loop without a bound (and within the bound on values)
      const items = Array.from({ length: 99_990 }, (_, i) => i)
      expect(badRequest(await pairs(items))).toBe(`input.system: template "system" failed to render: engine ran out of fuel (in pairs::only::system:1)`)
      await expectHaikuRenders("summer")
      expect(echoed(await pairs([1, 2])).system).toBe("(1, 1) (1, 2) (2, 1) (2, 2) ")
    })
  })

  describe("deeply nested values anywhere in a body", () => {
    it("an extra_body value, tool call arguments, an unknown block, an ignored OpenAI field: a 400 naming the field, not a 500", async () => {
      const deep = nestedArrays(20_000)
      const hi = `{"role":"user","content":"hi"}`
      const cases: Array<[string, string, string]> = [
        ["/inference", `{"function_name":"up_chat","input":{"messages":[${hi}]},"extra_body":[{"pointer":"/x","value":${deep}}]}`, "extra_body[0].value"],
        [
          "/inference",
          `{"function_name":"up_chat","input":{"messages":[{"role":"assistant","content":[{"type":"tool_call","id":"1","name":"t","arguments":{"a":${deep}}}]},${hi}]}}`,
          "input.messages[0]"
        ],
        ["/inference", `{"function_name":"up_chat","input":{"messages":[{"role":"user","content":[{"type":"unknown","data":${deep}}]}]}}`, "input.messages[0]"],
        ["/openai/v1/chat/completions", `{"model":"gateway::function_name::up_chat","messages":[${hi}],"ignored":${deep}}`, "ignored[0][0]"],
        ["/feedback", `{"metric_name":"m","inference_id":"x","value":${deep}}`, "value[0][0]"]
      ]
      for (const [route, body, field] of cases) {
        const response = await gateway.post(route, body)
        expect(response.status, JSON.stringify(response.body)).toBe(400)
        const message = route.startsWith("/openai") ? response.body.error.message : response.body.error
        expect(message).toBe(`${field}: nests deeper than 128 levels, the limit of a request body`)
      }
      expect(fake.requests).toHaveLength(0)
      // 128 levels in all are fine: the body, extra_body, its entry, and 125 arrays
      const atLimit = await gateway.post(
        "/inference",
        `{"function_name":"up_chat","input":{"messages":[${hi}]},"extra_body":[{"pointer":"/x","value":${nestedArrays(125)}}]}`
      )
      expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(200)
      expect(JSON.stringify(fake.requests[0].body.x)).toBe(nestedArrays(125))
    })
  })

  describe("extra_headers and extra_body", () => {
    const upChat = (extra: Record<string, unknown>) =>
      gateway.post("/inference", { function_name: "up_chat", input: userInput("hi"), ...extra })

    it("a header value with CR or LF is a 400 naming the field; the upstream is never called", async () => {
      for (const value of ["a\r\nx-injected: 1", "a\nb", "a\rb"]) {
        const message = badRequest(await upChat({ extra_headers: [{ name: "x-ok", value: "1" }, { name: "x-team", value }] }))
        expect(message).toBe(`extra_headers[1].value: the value of "x-team" holds a line break or a NUL, which HTTP headers cannot carry`)
      }
      expect(fake.requests).toHaveLength(0)
    })

    it("a header value outside Latin-1, or with a control character, is a 400 naming the field (was a provider failure, 502); the upstream is never called", async () => {
      const cases: ReadonlyArray<readonly [string, string, number]> = [
        ["日本語", "U+65E5", 0],
        ["café ☕", "U+2615", 5],
        ["smile 😀", "U+1F600", 6],
        ["a\u0001b", "U+0001", 1],
        ["del\u007f", "U+007F", 3]
      ]
      for (const [value, codePoint, index] of cases) {
        const message = badRequest(await upChat({ extra_headers: [{ name: "x-ok", value: "1" }, { name: "x-team", value }] }))
        expect(message).toBe(
          `extra_headers[1].value: the value of "x-team" holds the character ${codePoint} (at index ${index}), which HTTP headers cannot carry: only tab, printable ASCII and Latin-1 characters`
        )
      }
      const openAi = await gateway.post("/openai/v1/chat/completions", {
        model: "gateway::function_name::up_chat",
        messages: [{ role: "user", content: "hi" }],
        "gateway::extra_headers": [{ name: "x-team", value: "日本語" }]
      })
      expect(openAi.status, JSON.stringify(openAi.body)).toBe(400)
      expect(openAi.body.error.message).toMatch(/^extra_headers\[0\]\.value: the value of "x-team" holds the character U\+65E5/)
      expect(fake.requests).toHaveLength(0)
      // Latin-1 and tabs are sent as they are
      const ok = await upChat({ extra_headers: [{ name: "x-team", value: "café\tnoir" }] })
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      expect(fake.requests[0].headers["x-team"]).toBe("café\tnoir")
    })

    it("a dynamic API key that a header cannot carry is a 400 naming credentials, without echoing the key (was a provider failure, 502)", async () => {
      const keyed = (key: string) =>
        gateway.post("/inference", { model_name: "keyed", input: userInput("hi"), credentials: { upstream_key: key } })
      for (const [key, character] of [["sk-日本", "the character U+65E5 (at index 3)"], ["sk-a\r\nx-injected: 1", "a line break or a NUL"]]) {
        expect(badRequest(await keyed(key))).toBe(`credentials: the API key given holds ${character}, which an HTTP header cannot carry`)
      }
      expect(fake.requests).toHaveLength(0)
      // a key a header can carry reaches the provider as its Authorization
      const ok = await keyed("sk-café")
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      expect(fake.requests[0].headers.authorization).toBe("Bearer sk-café")
    })

    it("framing, host and hop-by-hop headers cannot be set or removed by a request", async () => {
      const reserved = [
        "content-length", "Transfer-Encoding", "host", "Connection", "keep-alive", "proxy-authenticate",
        "proxy-authorization", "te", "trailer", "upgrade", "expect"
      ]
      for (const name of reserved) {
        expect(badRequest(await upChat({ extra_headers: [{ name, value: "1" }] }))).toBe(
          `extra_headers[0].name: "${name}" is managed by the gateway's HTTP client: it cannot be set or removed`
        )
        expect(badRequest(await upChat({ extra_headers: [{ name, delete: true }] }))).toMatch(/^extra_headers\[0\]\.name: /)
      }
      expect(badRequest(await upChat({ extra_headers: [{ name: "bad name\n", value: "1" }] }))).toBe(
        `extra_headers[0].name: "bad name\\n" is not a valid HTTP header name`
      )
      expect(fake.requests).toHaveLength(0)
      // an ordinary header still goes through
      const ok = await upChat({ extra_headers: [{ name: "x-team", value: "red" }] })
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      expect(fake.requests[0].headers["x-team"]).toBe("red")
    })

    it("the OpenAI-compatible route's gateway::extra_headers: the same 400, in OpenAI's shape", async () => {
      const response = await gateway.post("/openai/v1/chat/completions", {
        model: "gateway::function_name::up_chat",
        messages: [{ role: "user", content: "hi" }],
        "gateway::extra_headers": [{ name: "x-team", value: "a\r\nb" }]
      })
      expect(response.status, JSON.stringify(response.body)).toBe(400)
      expect(response.body.error.message).toMatch(/extra_headers\[0\]\.value: .*line break/)
      expect(fake.requests).toHaveLength(0)
    })

    it("a request's extra_body pointer through a string or a number is a 400 that ends the inference (no fallback)", async () => {
      for (const pointer of ["/messages/0/content/x", "/max_completion_tokens/x", "/messages/0/content/x/y"]) {
        const message = badRequest(await upChat({ params: { chat_completion: { max_tokens: 5 } }, extra_body: [{ pointer: "/ok", value: 1 }, { pointer, value: 1 }] }))
        expect(message).toBe(`extra_body[1].pointer: extra_body pointer "${pointer}" goes through a value that is not an object or array`)
      }
      expect(badRequest(await upChat({ extra_body: [{ pointer: "/messages/7/x", value: 1 }] }))).toMatch(/^extra_body\[0\]\.pointer: .*no index "7"/)
      // neither provider was called
      expect(fake.requests).toHaveLength(0)
      // streamed, the same
      const streamed = await gateway.post("/inference", {
        function_name: "up_chat",
        input: userInput("hi"),
        stream: true,
        extra_body: [{ pointer: "/messages/0/content/x", value: 1 }]
      })
      expect(badRequest(streamed)).toMatch(/^extra_body\[0\]\.pointer: /)
      expect(fake.requests).toHaveLength(0)
      // and a pointer that fits goes through
      const ok = await upChat({ extra_body: [{ pointer: "/metadata/team", value: "red" }] })
      expect(ok.status, JSON.stringify(ok.body)).toBe(200)
      expect(fake.requests[0].body.metadata).toEqual({ team: "red" })
    })

    it("a configured extra_body that does not fit stays a provider failure: the next provider answers", async () => {
      const response = await gateway.post("/inference", { model_name: "misconfigured", input: userInput("hi") })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(fake.requests.map((request) => request.body.model)).toEqual(["gpt-second"])
    })
  })

  describe("client-supplied field names in the log", () => {
    it("unknown OpenAI fields: quoted and few in the warning, and the request answers as before", async () => {
      const body: Record<string, unknown> = {
        model: "gateway::model_name::dummy::echo_request_messages",
        messages: [{ role: "user", content: "hi" }],
        "evil\n[00:00:00.000] ERROR (#1): forged line": 1
      }
      // within the 20,000 distinct keys a body may hold (more is a 400: hardening-bodies.test.ts)
      for (let i = 0; i < 9_000; i++) body[`unknown_${i}`] = i
      const before = gateway.log().length
      const response = await gateway.post("/openai/v1/chat/completions", body)
      expect(response.status, JSON.stringify(response.body).slice(0, 500)).toBe(200)
      await expect.poll(() => gateway.log().slice(before)).toMatch(/ignoring unknown fields/)
      const logged = gateway.log().slice(before)
      expect(logged).toContain(`"evil\\n[00:00:00.000] ERROR (#1): forged line"`)
      expect(logged).toContain("and 8981 more")
      expect(logged.split("\n").filter((line) => line.includes("forged line"))).toHaveLength(1)
      expect(logged.split("\n").every((line) => !line.startsWith("[00:00:00.000]"))).toBe(true)
      expect(Math.max(...logged.split("\n").map((line) => line.length))).toBeLessThan(4096)

      // with gateway::deny_unknown_fields, the 400 lists them the same way
      const denied = await gateway.post("/openai/v1/chat/completions", { ...body, "gateway::deny_unknown_fields": true })
      expect(denied.status).toBe(400)
      expect(denied.body.error.message.length).toBeLessThan(4096)
      expect(denied.body.error.message).toMatch(/^unknown fields: .*and 8981 more$/)
    })

    it("an input_audio format is quoted in its warning", async () => {
      const wav = Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt ", "latin1").toString("base64")
      const before = gateway.log().length
      const response = await gateway.post("/openai/v1/chat/completions", {
        model: "gateway::model_name::dummy::echo_request_messages",
        messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: wav, format: "mp3\n[00:00:00.000] forged" } }] }]
      })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      await expect.poll(() => gateway.log().slice(before)).toMatch(/looks like wav/)
      expect(gateway.log().slice(before)).toContain(`not "mp3\\n[00:00:00.000] f..."`)
      expect(gateway.log().slice(before).split("\n").every((line) => !line.startsWith("[00:00:00.000]"))).toBe(true)
    })
  })
})

describe("configured extra_headers that cannot be sent", () => {
  it("refuse to start, naming the key (a header the HTTP client sets is only dropped)", async () => {
    const dir = writeFiles({
      "config.toml": `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "openai"
model_name = "gpt"
api_key_location = "none"
extra_headers = [{ name = "x-ok", value = "1" }, { name = "Content-Length", value = "5" }, { name = "x-lang", value = "日本語" }]

[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
extra_headers = [{ name = "x-team", value = "a\\r\\nb" }, { name = "upgrade", delete = true }]
`
    })
    const result = await runGateway(["--config-file", path.join(dir, "config.toml")], {
      env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" },
      cwd: dir
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).not.toContain("Listening on")
    // a header the HTTP client sets itself is dropped with a warning (TensorZero's configurations carry some): not a problem
    expect(result.stderr).not.toContain(`extra_headers[1].name: "Content-Length" is managed`)
    expect(result.stderr).toContain(
      `models.m.providers.p.extra_headers[2].value: the value of "x-lang" holds the character U+65E5 (at index 0), which HTTP headers cannot carry`
    )
    expect(result.stderr).toContain(`functions.f.variants.v.extra_headers[0].value: the value of "x-team" holds a line break or a NUL`)
    expect(result.stderr).not.toContain(`functions.f.variants.v.extra_headers[1].name: "upgrade" is managed`)
  })
})

describe.each(backends)("list_inferences filters on %s", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway
  let storedId: string

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await startGateway({
      config: `${observabilityToml()}
[functions.listed]
type = "chat"
[functions.listed.variants.a]
type = "chat_completion"
model = "dummy::hello"
`,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url }
    })
    const made = await gateway.post("/inference", { function_name: "listed", input: userInput("hi"), tags: { team: "red" } })
    expect(made.status, JSON.stringify(made.body)).toBe(200)
    storedId = made.body.inference_id
    await waitForInferences(gateway, [storedId])
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  const list = (body: Record<string, unknown>) => gateway.post("/v1/inferences/list_inferences", body)
  const tag = (value: string, key = "team") => ({ type: "tag", key, value })
  /** the gateway still reads: the stored inference, found by its tag */
  const stillReads = async () => {
    const found = await listInferences(gateway, { function_name: "listed", filters: { type: "or", children: [tag("blue"), tag("red")] } })
    expect(found.map((inference: any) => inference.inference_id)).toEqual([storedId])
  }

  it("`not` 3 000 deep, or 40 deep: a 400 naming the limit", async () => {
    const nots = (depth: number) => {
      let filter: unknown = tag("red")
      for (let i = 0; i < depth; i++) filter = { type: "not", child: filter }
      return filter
    }
    expect(badRequest(await list({ filters: nots(3000) }))).toBe("filters.child.child: nests deeper than 128 levels, the limit of a request body")
    expect(badRequest(await list({ filters: nots(40) }))).toBe(`filters${".child".repeat(32)}: filters nest deeper than 32 levels`)
    await stillReads()
  })

  it("`or` with 30 000 children: a 400 naming the limit", async () => {
    const children = Array.from({ length: 30_000 }, (_, i) => tag(String(i)))
    expect(badRequest(await list({ filters: { type: "or", children } }))).toBe(
      "filters.children[99]: filters hold more than 100 conditions in all"
    )
    await stillReads()
  })

  it("filters at the limits are answered", async () => {
    // 100 conditions: an `or` of 99 tags, one of which matches
    const wide = { type: "or", children: [...Array.from({ length: 98 }, (_, i) => tag(`blue${i}`)), tag("red")] }
    const found = await listInferences(gateway, { function_name: "listed", filters: wide })
    expect(found.map((inference: any) => inference.inference_id)).toEqual([storedId])
    // 32 levels: 31 `not`s (an odd number: the tag is negated) around a tag
    let deep: unknown = tag("blue")
    for (let i = 0; i < 31; i++) deep = { type: "not", child: deep }
    const deepFound = await listInferences(gateway, { function_name: "listed", filters: deep })
    expect(deepFound.map((inference: any) => inference.inference_id)).toEqual([storedId])
    // 16 384 characters of text in all: "team" and the value, "team" and "red"
    const long = { type: "or", children: [tag("x".repeat(16_384 - 11)), tag("red")] }
    expect((await listInferences(gateway, { function_name: "listed", filters: long })).map((i: any) => i.inference_id)).toEqual([storedId])
  })

  it("more text than the limit: a 400 naming the field", async () => {
    const long = { type: "and", children: [tag("red"), tag("x".repeat(20_000))] }
    expect(badRequest(await list({ filters: long }))).toBe(
      "filters.children[1].value: the keys, values, times and metric names of filters exceed 16384 characters in all"
    )
    await stillReads()
  })

  it("a NUL in a tag key or value, a time, or a name: a 400 naming the field", async () => {
    const nul = "holds a NUL character (\\u0000), which no stored value can contain"
    expect(badRequest(await list({ filters: { type: "not", child: tag("red\u0000") } }))).toBe(`filters.child.value: ${nul}`)
    expect(badRequest(await list({ filters: { type: "and", children: [tag("red"), tag("red", "te\u0000am")] } }))).toBe(
      `filters.children[1].key: ${nul}`
    )
    expect(badRequest(await list({ filters: { type: "time", time: "2026-01-01T00:00:00Z\u0000", comparison_operator: "<" } }))).toMatch(
      /^filters\.time: expected an RFC 3339 time/
    )
    expect(badRequest(await list({ function_name: "listed\u0000" }))).toBe(`function_name: ${nul}`)
    expect(badRequest(await list({ variant_name: "\u0000" }))).toBe(`variant_name: ${nul}`)
    await stillReads()
  })
})
