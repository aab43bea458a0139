/**
 * The fakes of the GEPA tests (test/integration/gepa-*.test.ts): an OpenAI-compatible server
 * whose models are deterministic by name (the task model repeats the word it is asked for only
 * when its system prompt holds the phrase MAGIC, the analyst says so, the mutator proposes a
 * template with the phrase), counting requests per model, those in flight and the most at once; the
 * configuration of a function `echo` whose initial template lacks the phrase; datapoints.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { textCompletion } from "./fakeOpenAi.ts"
import { observabilityToml } from "./observability.ts"

export interface GepaFakeModels {
  readonly apiBase: string
  /** requests by model */
  readonly calls: Map<string, number>
  /** requests being answered now */
  readonly inFlight: number
  /** the most requests in flight at once */
  maxInFlight: number
  /** models that answer 500 */
  readonly failing: Set<string>
  /** the error message of their 500 (default: "<model> is down") */
  failingMessage: string | undefined
  /** milliseconds each answer takes */
  delayMs: number
  close(): Promise<void>
}

const systemOf = (body: any): string => body.messages.find((message: any) => message.role === "system")?.content ?? ""
const lastUser = (body: any): string => {
  const content = body.messages.filter((message: any) => message.role === "user").at(-1)?.content
  return typeof content === "string" ? content : content.map((part: any) => part.text).join("")
}

const answerOf = (model: string, body: any): string => {
  switch (model) {
    case "task": {
      const word = /Repeat: (\w+)/.exec(lastUser(body))?.[1] ?? "?"
      return systemOf(body).includes("MAGIC") ? word : "I will not"
    }
    case "analyst":
      return JSON.stringify({ analysis: "The answer refuses: the system prompt lacks the phrase MAGIC that makes the model comply." })
    case "mutator":
      return JSON.stringify({ templates: [{ name: "system", content: "You repeat words. MAGIC" }] })
    default:
      return "?"
  }
}

export const startGepaFakeModels = async (): Promise<GepaFakeModels> => {
  const fake = {
    calls: new Map<string, number>(),
    inFlight: 0,
    maxInFlight: 0,
    failing: new Set<string>(),
    failingMessage: undefined as string | undefined,
    delayMs: 20
  }
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      fake.inFlight++
      fake.maxInFlight = Math.max(fake.maxInFlight, fake.inFlight)
      const body = JSON.parse(Buffer.concat(parts).toString("utf8"))
      const model: string = body.model
      fake.calls.set(model, (fake.calls.get(model) ?? 0) + 1)
      setTimeout(() => {
        fake.inFlight--
        if (fake.failing.has(model)) {
          res.writeHead(500, { "content-type": "application/json" })
          res.end(JSON.stringify({ error: { message: fake.failingMessage ?? `${model} is down`, type: "server_error" } }))
          return
        }
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(textCompletion(answerOf(model, body))))
      }, fake.delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(fake, {
    apiBase: `http://127.0.0.1:${port}/v1/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  })
}

export const gepaConfig = (apiBase: string) => `
${observabilityToml()}
${["task", "analyst", "mutator"].map((model) => `
[models.${model}]
routing = ["fake"]
[models.${model}.providers.fake]
type = "openai"
model_name = "${model}"
api_base = "${apiBase}"
api_key_location = "none"
`).join("")}

[functions.echo]
type = "chat"
[functions.echo.variants.base]
type = "chat_completion"
model = "task"
system_template = "system.minijinja"
[functions.echo.variants.plain]
type = "chat_completion"
model = "task"
weight = 0
[functions.echo.evaluators.exact]
type = "exact_match"
`

export const gepaFiles = { "system.minijinja": "You repeat words." }

/** datapoints of `echo` asking to repeat each word, with the word as their output */
export const wordDatapoints = (words: ReadonlyArray<string>) =>
  words.map((word) => ({
    type: "chat",
    function_name: "echo",
    input: { messages: [{ role: "user", content: [{ type: "text", text: `Repeat: ${word}` }] }] },
    output: [{ type: "text", text: word }]
  }))
