/**
 * The advanced variant types end to end, against a fake OpenAI server whose models behave
 * deterministically by name: candidates that answer "answer A" / "answer B" (or fail, or are
 * slow), an evaluator that picks candidate 1 (or answers nonsense, or fails), a fuser that
 * joins the candidates it was shown, and a chain-of-thought model that thinks in tags or in a
 * `thinking` field. What is answered, streamed and stored is checked.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, type ReceivedRequest, type Reply, startFakeOpenAi, textCompletion, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, waitForInference } from "../support/observability.ts"

const models = ["cand_a", "cand_b", "cand_fail", "cand_slow", "judge", "judge_nonsense", "judge_fail", "fuser", "cot", "json_a", "json_b"]

const config = (apiBase: string) => `
${observabilityToml({})}
${models.map((model) => `
[models.${model}]
routing = ["p"]
[models.${model}.providers.p]
type = "openai"
model_name = "${model}"
api_base = "${apiBase}"
api_key_location = "env::FAKE_KEY"
`).join("")}

[functions.chat]
type = "chat"
${[["a", "cand_a"], ["b", "cand_b"], ["fail", "cand_fail"], ["slow", "cand_slow"]].map(([name, model]) => `
[functions.chat.variants.${name}]
type = "chat_completion"
model = "${model}"
weight = 0
`).join("")}
[functions.chat.variants.bon]
type = "experimental_best_of_n_sampling"
candidates = ["a", "b"]
weight = 1
[functions.chat.variants.bon.evaluator]
model = "judge"
system_instructions = "evaluator.txt"

[functions.chat.variants.bon_nonsense]
type = "experimental_best_of_n_sampling"
candidates = ["a", "b"]
weight = 0
evaluator = { model = "judge_nonsense" }

[functions.chat.variants.bon_judge_down]
type = "experimental_best_of_n_sampling"
candidates = ["a", "b"]
weight = 0
evaluator = { model = "judge_fail" }

[functions.chat.variants.bon_one]
type = "experimental_best_of_n_sampling"
candidates = ["a", "fail"]
weight = 0
evaluator = { model = "judge" }

[functions.chat.variants.bon_none]
type = "experimental_best_of_n_sampling"
candidates = ["fail", "fail"]
weight = 0
evaluator = { model = "judge" }

[functions.chat.variants.bon_timeout]
type = "experimental_best_of_n_sampling"
candidates = ["a", "slow"]
timeout_s = 0.4
weight = 0
evaluator = { model = "judge" }

[functions.chat.variants.mon]
type = "experimental_mixture_of_n"
candidates = ["a", "b", "a"]
weight = 0
fuser = { model = "fuser" }

[functions.chat.variants.mon_fuser_down]
type = "experimental_mixture_of_n_sampling"
candidates = ["a", "b"]
weight = 0
fuser = { model = "judge_fail" }

[functions.chat.variants.cot]
type = "experimental_chain_of_thought"
model = "cot"
weight = 0

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.a]
type = "chat_completion"
model = "json_a"
weight = 0
[functions.extract.variants.b]
type = "chat_completion"
model = "json_b"
weight = 0
[functions.extract.variants.bon]
type = "experimental_best_of_n_sampling"
candidates = ["a", "b"]
weight = 1
evaluator = { model = "judge" }
[functions.extract.variants.cot]
type = "experimental_chain_of_thought"
model = "cot"
weight = 0
`

const files = {
  "evaluator.txt": "You judge greetings.",
  "answer.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false })
}

const input = { messages: [{ role: "user", content: "Say something" }] }

/** the candidates the fuser or evaluator was shown, from its last message */
const shownCandidates = (request: ReceivedRequest): Array<string> => {
  const last = request.body.messages.at(-1).content as string
  return [...last.matchAll(/--- candidate \d+ ---\n([\s\S]*?)(?=\n\n--- )/g)].map((match) => match[1])
}

const reply = (request: ReceivedRequest): Reply => {
  const model: string = request.body.model
  const stream = request.body.stream === true
  const text = (value: string): Reply =>
    stream ? { kind: "stream", chunks: textStreamChunks(value.match(/.{1,5}/gs)!) } : { kind: "json", body: textCompletion(value) }
  const json = request.body.response_format !== undefined
  switch (model) {
    case "cand_a":
      return text("answer A")
    case "cand_b":
      return text("answer B")
    case "json_a":
      return text(JSON.stringify({ answer: "A" }))
    case "json_b":
      return text(JSON.stringify({ answer: "B" }))
    case "cand_fail":
    case "judge_fail":
      return { kind: "json", status: 500, body: { error: { message: `${model} is down` } } }
    case "cand_slow":
      return { kind: "json", delayMs: 1500, body: textCompletion("answer slow") }
    case "judge":
      return text(JSON.stringify({ thinking: "the second is better", answer_choice: 1 }))
    case "judge_nonsense":
      return text("banana")
    case "fuser":
      return text(`fused: ${shownCandidates(request).join(" + ")}`)
    case "cot":
      return text(json ? JSON.stringify({ thinking: "they want yes", response: { answer: "yes" } }) : "<thinking>first I think</thinking>The answer is 42.")
    default:
      return { kind: "json", status: 404, body: { error: { message: `no model ${model}` } } }
  }
}

describe("advanced variant types", () => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
    gateway = await startGateway({ config: config(fake.apiBase), files, env: { GATEWAY_ANALYTICS_DB_URL: database.url, FAKE_KEY: "sk-fake" } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })
  beforeEach(() => {
    fake.reset()
    fake.fallback = reply
  })

  const infer = (body: Record<string, unknown>) => gateway.post("/inference", { function_name: "chat", input, ...body })
  const calledModels = () => fake.requests.map((request) => request.body.model as string).sort()

  describe("best-of-n", () => {
    it("runs the candidates, asks the evaluator (its instructions, the conversation, the candidates), and answers with the one it picked", async () => {
      const response = await infer({ variant_name: "bon", include_original_response: true })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.variant_name).toBe("bon")
      expect(response.body.content).toEqual([{ type: "text", text: "answer B" }])
      expect(response.body.original_response).toContain("answer_choice")
      expect(calledModels()).toEqual(["cand_a", "cand_b", "judge"])
      const judge = fake.requests.find((request) => request.body.model === "judge")!
      expect(judge.body.messages[0]).toMatchObject({ role: "system" })
      expect(judge.body.messages[0].content).toContain("You judge greetings.")
      expect(judge.body.messages[1]).toEqual({ role: "user", content: "Say something" })
      expect(shownCandidates(judge)).toEqual(["answer A", "answer B"])
      expect(judge.body.response_format.type).toBe("json_schema")
      // every call is counted in the usage (the fake reports 12 + 7 per call)
      expect(response.body.usage).toMatchObject({ input_tokens: 36, output_tokens: 21 })
    })

    it("stores every candidate and the evaluator as model inferences of the one inference", async () => {
      const response = await infer({ variant_name: "bon" })
      const stored = await waitForInference(gateway, response.body.inference_id, { include_model_inferences: true })
      expect(stored.variant_name).toBe("bon")
      expect(stored.output).toEqual([{ type: "text", text: "answer B" }])
      const calls: Array<any> = stored.model_inferences
      expect(calls.map((call) => call.model_name).sort()).toEqual(["cand_a", "cand_b", "judge"])
      expect(calls.find((call) => call.model_name === "judge").raw_response).toContain("answer_choice")
    })

    it("picks a random candidate that answered when the evaluator answers nonsense or fails", async () => {
      for (const variant of ["bon_nonsense", "bon_judge_down"]) {
        const response = await infer({ variant_name: variant })
        expect(response.status, JSON.stringify(response.body)).toBe(200)
        expect(["answer A", "answer B"]).toContain(response.body.content[0].text)
      }
    })

    it("returns the only candidate that answered without asking the evaluator", async () => {
      const response = await infer({ variant_name: "bon_one" })
      expect(response.status).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: "answer A" }])
      expect(calledModels()).toEqual(["cand_a", "cand_fail"])
    })

    it("leaves out candidates slower than timeout_s", async () => {
      const started = Date.now()
      const response = await infer({ variant_name: "bon_timeout" })
      expect(response.status).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: "answer A" }])
      expect(Date.now() - started).toBeLessThan(1500)
      expect(calledModels()).not.toContain("judge")
    })

    it("fails like a variant when every candidate fails, naming each", async () => {
      const response = await infer({ variant_name: "bon_none" })
      expect(response.status).toBe(502)
      expect(response.body.error).toContain("every candidate of variant \"bon_none\" failed")
      expect(response.body.error).toContain("cand_fail is down")
    })

    it("streams the chosen answer", async () => {
      const response = await gateway.stream("/inference", { function_name: "chat", variant_name: "bon", input, stream: true })
      expect(response.status).toBe(200)
      const text = response.events.filter((event) => event.content !== undefined).flatMap((event) => event.content).map((block: any) => block.text ?? "").join("")
      expect(text).toBe("answer B")
      expect(response.events.at(-2).usage).toMatchObject({ input_tokens: 36, output_tokens: 21 })
    })

    it("works for json functions: the evaluator picks among parsed answers", async () => {
      const response = await gateway.post("/inference", { function_name: "extract", variant_name: "bon", input })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.output).toEqual({ raw: "{\"answer\":\"B\"}", parsed: { answer: "B" } })
    })

    it("lists every call in gateway_raw_response on the OpenAI route", async () => {
      const response = await gateway.post("/openai/v1/chat/completions", {
        model: "gateway::function_name::chat",
        "gateway::variant_name": "bon",
        messages: [{ role: "user", content: "Say something" }],
        "gateway::include_raw_response": true
      })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.choices[0].message.content).toBe("answer B")
      const raw: Array<any> = response.body.gateway_raw_response
      expect(raw).toHaveLength(3)
      expect(raw.map((entry) => entry.provider_type)).toEqual(["openai", "openai", "openai"])
      expect(raw.some((entry) => String(entry.data).includes("answer_choice"))).toBe(true)
    })
  })

  describe("mixture-of-n", () => {
    it("fuses the candidates' answers (repeats run again) and stores them all", async () => {
      const response = await infer({ variant_name: "mon", include_original_response: true })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: "fused: answer A + answer B + answer A" }])
      expect(response.body.original_response).toContain("fused:")
      expect(calledModels()).toEqual(["cand_a", "cand_a", "cand_b", "fuser"])
      const stored = await waitForInference(gateway, response.body.inference_id, { include_model_inferences: true })
      expect(stored.model_inferences.map((call: any) => call.model_name).sort()).toEqual(["cand_a", "cand_a", "cand_b", "fuser"])
    })

    it("streams the fuser's answer as it comes", async () => {
      const response = await gateway.stream("/inference", { function_name: "chat", variant_name: "mon", input, stream: true })
      expect(response.status).toBe(200)
      const pieces = response.events.filter((event) => event.content?.length > 0)
      expect(pieces.length).toBeGreaterThan(3)
      expect(pieces.flatMap((event) => event.content).map((block: any) => block.text).join("")).toBe("fused: answer A + answer B + answer A")
      const stored = await waitForInference(gateway, response.events[0].inference_id, { include_model_inferences: true })
      expect(stored.model_inferences).toHaveLength(4)
    })

    it("answers with a candidate when the fuser fails", async () => {
      const response = await infer({ variant_name: "mon_fuser_down" })
      expect(response.status).toBe(200)
      expect(["answer A", "answer B"]).toContain(response.body.content[0].text)
    })
  })

  describe("chain-of-thought", () => {
    it("chat: asks the model to think first, and returns its thinking as a thought block", async () => {
      const response = await infer({ variant_name: "cot", include_original_response: true })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.content).toEqual([{ type: "thought", text: "first I think" }, { type: "text", text: "The answer is 42." }])
      expect(response.body.original_response).toContain("<thinking>")
      expect(fake.requests[0].body.messages[0].content).toContain("<thinking>")
    })

    it("chat, streamed: the tags split across chunks still become a thought", async () => {
      const response = await gateway.stream("/inference", { function_name: "chat", variant_name: "cot", input, stream: true })
      expect(response.status).toBe(200)
      const blocks = response.events.flatMap((event) => event.content ?? [])
      expect(blocks.filter((block: any) => block.type === "thought").map((block: any) => block.text).join("")).toBe("first I think")
      expect(blocks.filter((block: any) => block.type === "text").map((block: any) => block.text).join("")).toBe("The answer is 42.")
      const stored = await waitForInference(gateway, response.events[0].inference_id)
      expect(stored.output).toEqual([{ type: "thought", text: "first I think", provider_type: "openai" }, { type: "text", text: "The answer is 42." }])
    })

    it("json: the schema gains a thinking field, removed from parsed and kept as a thought", async () => {
      const response = await gateway.post("/inference", { function_name: "extract", variant_name: "cot", input })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.output.parsed).toEqual({ answer: "yes" })
      expect(response.body.output.raw).toBe("{\"answer\":\"yes\"}")
      expect(response.body.output.auxiliary_content).toEqual([{ type: "thought", text: "they want yes" }])
      const schema = fake.requests[0].body.response_format.json_schema.schema
      expect(schema.required).toEqual(["thinking", "response"])
      expect(schema.properties.response.required).toEqual(["answer"])
    })
  })
})
