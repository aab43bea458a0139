/**
 * How the gateway answers bad requests over real HTTP: every error is a JSON body
 * `{"error": "..."}` with the right status and a message naming the field at fault; never
 * an empty body, never a stack trace.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RawResponse, rawRequest, type RunningGateway, startGateway } from "../support/gateway.ts"

const maxBodyBytes = 4096

const config = `
[gateway]
max_request_body_bytes = ${maxBodyBytes}

[functions.chat]
type = "chat"
[functions.chat.variants.only]
type = "chat_completion"
model = "dummy::echo_request_messages"

[functions.weather]
type = "chat"
schemas.system.path = "system.json"
schemas.user.path = "user.json"
[functions.weather.variants.only]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.system.path = "system.minijinja"
templates.user.path = "user.minijinja"

[functions.extract]
type = "json"
[functions.extract.variants.only]
type = "chat_completion"
model = "dummy::json"
`

const files = {
  "system.json": JSON.stringify({
    type: "object",
    properties: { assistant_name: { type: "string" } },
    required: ["assistant_name"],
    additionalProperties: false
  }),
  "user.json": JSON.stringify({
    type: "object",
    properties: {
      city: { type: "string" },
      days: { type: "integer" },
      options: { type: "object", properties: { units: { enum: ["metric", "imperial"] } } }
    },
    required: ["city", "days"]
  }),
  "system.minijinja": "You are {{ assistant_name }}.",
  "user.minijinja": "Weather in {{ city }} for {{ days }} days"
}

const chatInput = { messages: [{ role: "user", content: "Hello" }] }

/** Checks the one error shape and returns the message. */
const expectError = (response: RawResponse, status: number, pattern?: RegExp): string => {
  expect(response.status, response.text).toBe(status)
  expect(response.text).not.toBe("")
  expect(response.headers["content-type"]).toMatch(/^application\/json/)
  expect(response.text).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|Error:|_tag|FiberFailure/)
  const body = JSON.parse(response.text)
  expect(Object.keys(body)).toEqual(["error"])
  expect(typeof body.error).toBe("string")
  expect(body.error.length).toBeGreaterThan(0)
  if (pattern !== undefined) expect(body.error).toMatch(pattern)
  return body.error
}

describe("errors of POST /inference and of the routes", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config, files })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const send = (body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
    rawRequest(gateway.url + "/inference", { method: "POST", headers, body })
  const post = (body: unknown) => send(JSON.stringify(body))

  describe("the body as a whole", () => {
    it("malformed JSON -> 400", async () => {
      expectError(await send(`{"model_name": "dummy::x", "input": {`), 400, /malformed JSON/)
      expectError(await send(`{'model_name': 'dummy::x'}`), 400, /malformed JSON/)
    })

    it("empty body -> 400", async () => {
      expectError(await send(""), 400, /empty/)
      expectError(await send("   \n"), 400, /empty/)
      expectError(await rawRequest(gateway.url + "/inference", { method: "POST" }), 400, /empty/)
    })

    it("a JSON array, string, number or null -> 400", async () => {
      for (const body of [`[{"model_name":"dummy::x","input":{}}]`, `"text"`, "42", "null", "true"]) {
        expectError(await send(body), 400, /must be a JSON object/)
      }
    })

    it("accepts a body without a content-type header", async () => {
      const response = await send(JSON.stringify({ model_name: "dummy::hello", input: chatInput }), {})
      expect(response.status).toBe(200)
    })
  })

  describe("fields", () => {
    it("an unknown root field -> 400 naming it", async () => {
      expectError(await post({ model_name: "dummy::hello", input: chatInput, temperature: 0.3 }), 400, /^temperature: unknown field$/)
    })

    it("an unknown nested field -> 400 naming its path", async () => {
      const message = expectError(
        await post({ model_name: "dummy::hello", input: { messages: [{ role: "user", content: [{ type: "text", txt: "hi" }] }] } }),
        400
      )
      expect(message).toContain("input.messages[0].content[0].txt: unknown field")
      expectError(await post({ model_name: "dummy::hello", input: { ...chatInput, sytem: "x" } }), 400, /^input\.sytem: unknown field$/)
      expectError(
        await post({ model_name: "dummy::hello", input: chatInput, params: { chat_completion: { temprature: 1 } } }),
        400,
        /params\.chat_completion\.temprature: unknown field/
      )
    })

    it("missing input -> 400", async () => {
      expectError(await post({ model_name: "dummy::hello" }), 400, /^input: missing field$/)
    })

    it("a missing nested field -> 400 naming its path", async () => {
      expectError(await post({ model_name: "dummy::hello", input: { messages: [{ content: "hi" }] } }), 400, /input\.messages\[0\]\.role: missing field/)
    })

    it("a wrong type -> 400 naming the field", async () => {
      expectError(await post({ model_name: 42, input: chatInput }), 400, /^model_name: .*string/i)
      expectError(await post({ model_name: "dummy::hello", input: chatInput, stream: "yes" }), 400, /^stream: .*boolean/i)
      expectError(await post({ model_name: "dummy::hello", input: { messages: "hello" } }), 400, /^input\.messages: /)
      expectError(await post({ model_name: "dummy::hello", input: { messages: [{ role: "system", content: "x" }] } }), 400, /input\.messages\[0\]\.role/)
      expectError(await post({ model_name: "dummy::hello", input: chatInput, tags: { team: 7 } }), 400, /^tags\.team: /)
      expectError(await post({ model_name: "dummy::hello", input: chatInput, episode_id: 12 }), 400, /^episode_id: /)
    })

    it("lists every problem of the body, not only the first", async () => {
      const message = expectError(await post({ model_name: 1, input: chatInput, colour: "red" }), 400)
      expect(message).toContain("model_name: ")
      expect(message).toContain("colour: unknown field")
    })

    it("cuts long rejected values short", async () => {
      const message = expectError(await post({ model_name: ["x".repeat(2000)], input: chatInput }), 400, /^model_name: /)
      expect(message.length).toBeLessThan(600)
    })
  })

  describe("the target", () => {
    it("both function_name and model_name -> 400", async () => {
      expectError(await post({ function_name: "chat", model_name: "dummy::hello", input: chatInput }), 400, /function_name or model_name|not both/)
    })

    it("neither function_name nor model_name -> 400", async () => {
      expectError(await post({ input: chatInput }), 400, /function_name or model_name/)
    })

    it("an unknown function -> 404 naming it", async () => {
      expectError(await post({ function_name: "no_such_function", input: chatInput }), 404, /^function_name: Unknown function: no_such_function$/)
    })

    it("an unknown model -> 404 naming it", async () => {
      expectError(await post({ model_name: "no_such_model", input: chatInput }), 404, /"no_such_model"/)
      expectError(await post({ model_name: "nosuchprovider::model", input: chatInput }), 404, /"nosuchprovider::model"/)
    })

    it("tools on a json function -> 400 naming the field", async () => {
      expectError(await post({ function_name: "extract", input: chatInput, tool_choice: "auto" }), 400, /^tool_choice: /)
    })
  })

  describe("routes and methods", () => {
    it("an unknown route -> 404", async () => {
      expectError(await rawRequest(gateway.url + "/no/such/route"), 404, /\/no\/such\/route/)
      expectError(await rawRequest(gateway.url + "/inferences", { method: "POST", body: "{}" }), 404)
      expectError(await rawRequest(gateway.url + "/"), 404)
    })

    it("GET /inference -> 405", async () => {
      expectError(await rawRequest(gateway.url + "/inference"), 405, /POST/)
      expectError(await rawRequest(gateway.url + "/inference", { method: "PUT", body: "{}" }), 405)
      expectError(await rawRequest(gateway.url + "/status", { method: "POST", body: "{}" }), 405, /GET/)
    })

    it("GET /status -> {status: ok, version, config}", async () => {
      const response = await rawRequest(gateway.url + "/status")
      expect(response.status).toBe(200)
      expect(response.headers["content-type"]).toMatch(/^application\/json/)
      expect(JSON.parse(response.text)).toEqual({
        status: "ok",
        version: "0.1.0",
        config: { hash: expect.stringMatching(/^[0-9a-f]{64}$/), loaded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
        background_tasks: "off"
      })
    })

    it("GET /health -> {gateway: ok}", async () => {
      const response = await rawRequest(gateway.url + "/health")
      expect(response.status).toBe(200)
      expect(response.headers["content-type"]).toMatch(/^application\/json/)
      expect(JSON.parse(response.text)).toEqual({ gateway: "ok" })
    })

    it("ignores a query string when routing", async () => {
      const response = await rawRequest(gateway.url + "/status?verbose=1")
      expect(response.status).toBe(200)
    })
  })

  describe("body size", () => {
    const bodyOfSize = (bytes: number): string => {
      const base = JSON.stringify({ model_name: "dummy::hello", input: { system: "" } })
      return base.replace(`"system":""`, `"system":"${"a".repeat(bytes - base.length)}"`)
    }

    it("a body at the limit is accepted", async () => {
      const body = bodyOfSize(maxBodyBytes)
      expect(Buffer.byteLength(body)).toBe(maxBodyBytes)
      const response = await send(body)
      expect(response.status, response.text).toBe(200)
    })

    it("a body over the limit, with content-length -> 413", async () => {
      const body = bodyOfSize(maxBodyBytes + 1)
      expectError(await send(body), 413, new RegExp(`${maxBodyBytes} bytes`))
      expectError(await send(bodyOfSize(maxBodyBytes * 20)), 413)
    })

    it("a body over the limit, chunked -> 413", async () => {
      const body = bodyOfSize(maxBodyBytes * 3)
      const chunks = body.match(/.{1,1000}/gs)!
      const response = await rawRequest(gateway.url + "/inference", {
        method: "POST",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        chunks
      })
      expectError(response, 413, new RegExp(`${maxBodyBytes} bytes`))
    })

    it("a chunked body under the limit is accepted", async () => {
      const body = JSON.stringify({ model_name: "dummy::hello", input: chatInput })
      const response = await rawRequest(gateway.url + "/inference", {
        method: "POST",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        chunks: [body.slice(0, 10), body.slice(10)]
      })
      expect(response.status, response.text).toBe(200)
    })
  })

  describe("input and schemas", () => {
    const weather = (input: unknown) => post({ function_name: "weather", input })

    it("string content for a role with a schema -> 400 naming the field", async () => {
      expectError(
        await weather({ system: { assistant_name: "Sky" }, messages: [{ role: "user", content: "What's the weather?" }] }),
        400,
        /^input\.messages\[0\]\.content: .*user schema/
      )
    })

    it("a text block with text for a role with a schema -> 400", async () => {
      expectError(
        await weather({ system: { assistant_name: "Sky" }, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }),
        400,
        /^input\.messages\[0\]\.content\[0\]\.text: /
      )
    })

    it("a string system for a function with a system schema -> 400", async () => {
      expectError(await weather({ system: "You are Sky." }), 400, /^input\.system: /)
    })

    it("arguments not fitting the schema -> 400 naming the path", async () => {
      const message = expectError(
        await weather({
          system: { assistant_name: "Sky" },
          messages: [
            { role: "user", content: [{ type: "text", arguments: { city: "Paris", days: 2 } }] },
            { role: "assistant", content: "ok" },
            { role: "user", content: [{ type: "text", arguments: { city: "Rome", days: "two", options: { units: "kelvin" } } }] }
          ]
        }),
        400,
        /^input\.messages\[2\]\.content\[0\]\.arguments: /
      )
      expect(message).toContain("/days")
      expect(message).toContain("/options/units")
      expectError(await weather({ system: { assistant_name: "Sky", mood: "grumpy" } }), 400, /^input\.system: .*additional properties/)
      expectError(await weather({ system: {} }), 400, /^input\.system: .*assistant_name/)
    })

    it("a text block with both text and arguments -> 400", async () => {
      expectError(
        await post({ model_name: "dummy::hello", input: { messages: [{ role: "user", content: [{ type: "text", text: "a", arguments: { b: 1 } }] }] } }),
        400,
        /^input\.messages\[0\]\.content\[0\]: /
      )
    })

    it("arguments for a role without a template -> 400", async () => {
      expectError(
        await post({ function_name: "chat", input: { messages: [{ role: "user", content: [{ type: "text", arguments: { a: 1 } }] }] } }),
        400,
        /^input\.messages\[0\]\.content\[0\]\.arguments: .*no template "user"/
      )
    })

    it("valid arguments are accepted", async () => {
      const response = await weather({
        system: { assistant_name: "Sky" },
        messages: [{ role: "user", content: [{ type: "text", arguments: { city: "Paris", days: 2 } }] }]
      })
      expect(response.status, response.text).toBe(200)
    })
  })

  it("keeps serving after all these errors", async () => {
    const response = await gateway.post("/inference", { model_name: "dummy::hello", input: chatInput })
    expect(response.status).toBe(200)
    expect(gateway.log()).not.toMatch(/request failed unexpectedly/)
  })
})
