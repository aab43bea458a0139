/**
 * Dynamic in-context learning at inference, end to end on ClickHouse and on Postgres: examples
 * stored with embeddings at known cosine distances from the fake embedder's vector of the
 * request's input, a fake OpenAI chat model that answers by how many examples it was shown.
 * What the embedder and the model received (the k nearest examples within max_distance, nearest
 * first, as user/assistant pairs, then the input; the instructions), what is answered whole and
 * streamed (usage with the embedding's tokens), what is stored (the embedding call as a model
 * inference of the inference), json functions, a variant without examples, a failing embedder
 * (the next variant is tried), and a gateway without an example store.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { diclInputText } from "../../src/dicl/examples.ts"
import { type DiclExample } from "../../src/dicl/store.ts"
import { diclDefaultInstructions } from "../../src/inference/variants/dicl.ts"
import { uuidv7 } from "../../src/ids.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeEmbeddings, fakeVector, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { type FakeOpenAi, type ReceivedRequest, type Reply, startFakeOpenAi, textCompletion, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, waitForInference } from "../support/observability.ts"
import { type OpenStore, openStore, run } from "../support/storeFixtures.ts"

const embedKey = "sk-embed"

const config = (chatBase: string, good: string, broken: string, withStore = true) => `
${withStore ? observabilityToml() : ""}
[models.learner]
routing = ["p"]
[models.learner.providers.p]
type = "openai"
model_name = "learner"
api_base = "${chatBase}"
api_key_location = "env::FAKE_KEY"

${[["small", good], ["broken", broken]].map(([name, base]) => `
[embedding_models.${name}]
routing = ["fake"]
[embedding_models.${name}.providers.fake]
type = "openai"
model_name = "text-embedding-3-small"
api_base = "${base}"
api_key_location = "env::EMBED_KEY"
`).join("")}

[functions.answer]
type = "chat"
[functions.answer.variants.dicl]
type = "experimental_dynamic_in_context_learning"
embedding_model = "small"
model = "learner"
k = 3
max_distance = 0.2
weight = 1
[functions.answer.variants.dicl_wide]
type = "experimental_dynamic_in_context_learning"
embedding_model = "small"
model = "learner"
k = 3
system_instructions = "instructions.txt"
weight = 0
[functions.answer.variants.dicl_empty]
type = "experimental_dynamic_in_context_learning"
embedding_model = "small"
model = "learner"
k = 3
weight = 0

[functions.fallback]
type = "chat"
[functions.fallback.experimentation]
type = "static"
candidate_variants = ["dicl_broken"]
fallback_variants = ["plain"]
[functions.fallback.variants.dicl_broken]
type = "experimental_dynamic_in_context_learning"
embedding_model = "broken"
model = "learner"
k = 2
[functions.fallback.variants.plain]
type = "chat_completion"
model = "learner"

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.dicl]
type = "experimental_dynamic_in_context_learning"
embedding_model = "small"
model = "learner"
k = 1
`

const files = {
  "instructions.txt": "Answer arithmetic like the examples.",
  "answer.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
}

const input = { messages: [{ role: "user", content: "What is two plus two?" }] }
const query = fakeVector(diclInputText(input))

/** a unit vector at cosine distance `distance` from `vector` (in the plane of it and an axis it is not along) */
const atDistance = (vector: ReadonlyArray<number>, distance: number): Array<number> => {
  const norm = Math.hypot(...vector)
  const unit = vector.map((value) => value / norm)
  const smallest = unit.map(Math.abs).indexOf(Math.min(...unit.map(Math.abs)))
  const axis = unit.map((_, index): number => (index === smallest ? 1 : 0))
  const along = axis.reduce((sum, value, index) => sum + value * unit[index], 0)
  const orthogonal = axis.map((value, index) => value - along * unit[index])
  const orthogonalNorm = Math.hypot(...orthogonal)
  const cos = 1 - distance
  const sin = Math.sqrt(1 - cos * cos)
  return unit.map((value, index) => cos * value + sin * orthogonal[index] / orthogonalNorm)
}

const chatInput = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })

/** examples at these distances from the request's input, with the question and answer given */
const examples: ReadonlyArray<{ question: string; answer: string; distance: number }> = [
  { question: "What is three plus three?", answer: "six", distance: 0.1 },
  { question: "What is two plus two?", answer: "four", distance: 0 },
  { question: "Name a color.", answer: "blue", distance: 0.3 },
  { question: "Who wrote Hamlet?", answer: "Shakespeare", distance: 1.9 }
]

const example = (functionName: string, variantName: string, question: string, output: DiclExample["output"], distance: number): DiclExample => ({
  id: uuidv7(Date.now()),
  functionName,
  variantName,
  input: chatInput(question),
  output,
  embedding: atDistance(query, distance),
  embeddingModel: "small",
  createdAt: Date.now()
})

/** the learner answers how many examples it was shown (assistant messages), as text or as the json function's answer */
const reply = (request: ReceivedRequest): Reply => {
  const shown = request.body.messages.filter((message: any) => message.role === "assistant").length
  const answer = request.body.response_format === undefined ? `learned from ${shown}` : JSON.stringify({ answer: `learned from ${shown}` })
  return request.body.stream === true
    ? { kind: "stream", chunks: textStreamChunks(answer.match(/.{1,6}/gs)!) }
    : { kind: "json", body: textCompletion(answer) }
}

/** the messages the learner received after the system one, as role and text */
const conversation = (request: ReceivedRequest) =>
  request.body.messages.filter((message: any) => message.role !== "system").map((message: any) => [
    message.role,
    typeof message.content === "string" ? message.content : message.content.map((part: any) => part.text).join("")
  ])

const exampleTurns = (...questions: ReadonlyArray<string>) =>
  questions.flatMap((question) => [
    ["user", diclInputText(chatInput(question))],
    ["assistant", examples.find((entry) => entry.question === question)!.answer]
  ])

const inputTurn = ["user", diclInputText(input)]

describe.each(backends)("DICL at inference on %s", (backend) => {
  let analytics: TestDatabase
  let chat: FakeOpenAi
  let good: FakeEmbeddings
  let broken: FakeEmbeddings
  let gateway: RunningGateway
  let opened: OpenStore

  beforeAll(async () => {
    ;[analytics, chat, good, broken] = await Promise.all([freshDatabase(backend), startFakeOpenAi(), startFakeEmbeddings(embedKey), startFakeEmbeddings(embedKey)])
    broken.failWith = 503
    gateway = await startGateway({
      config: config(chat.apiBase, good.apiBase, broken.apiBase),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, FAKE_KEY: "sk-fake", EMBED_KEY: embedKey }
    })
    opened = await openStore(backend, analytics.url)
    for (const variant of ["dicl", "dicl_wide"]) {
      await run(opened.store.dicl.write(
        "default",
        "answer",
        variant,
        examples.map((entry) => example("answer", variant, entry.question, [{ type: "text", text: entry.answer }], entry.distance)),
        "replace"
      ))
    }
    await run(opened.store.dicl.write("default", "extract", "dicl", [
      example("extract", "dicl", "What is two plus two?", { raw: "{\"answer\":\"four\"}", parsed: { answer: "four" } }, 0)
    ], "replace"))
  }, 60_000)

  afterAll(async () => {
    await opened?.close()
    await gateway?.stop()
    await Promise.all([chat?.close(), good?.close(), broken?.close()])
    await analytics?.drop()
  })

  beforeEach(() => {
    chat.reset()
    chat.fallback = reply
    good.requests.length = 0
    broken.requests.length = 0
  })

  it("embeds the input, sends the k nearest examples within max_distance before it, and answers", async () => {
    const response = await gateway.post("/inference", { function_name: "answer", input })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.variant_name).toBe("dicl")
    expect(response.body.content).toEqual([{ type: "text", text: "learned from 2" }])
    expect(good.requests.map((request) => request.body.input)).toEqual([[diclInputText(input)]])
    expect(chat.requests).toHaveLength(1)
    const sent = chat.requests[0]
    expect(sent.body.messages[0]).toEqual({ role: "system", content: diclDefaultInstructions })
    // nearest first; the one at 0.3 is past max_distance, the one at 1.9 too
    expect(conversation(sent)).toEqual([...exampleTurns("What is two plus two?", "What is three plus three?"), inputTurn])
    // the chat call's tokens (12 + 7) and the embedding's (its input's words)
    const embeddingTokens = diclInputText(input).split(/\s+/).length
    expect(response.body.usage).toMatchObject({ input_tokens: 12 + embeddingTokens, output_tokens: 7 })
  })

  it("takes k examples when no max_distance is set, after its own system instructions", async () => {
    const response = await gateway.post("/inference", { function_name: "answer", variant_name: "dicl_wide", input })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.content).toEqual([{ type: "text", text: "learned from 3" }])
    const sent = chat.requests[0]
    expect(sent.body.messages[0]).toEqual({ role: "system", content: "Answer arithmetic like the examples." })
    expect(conversation(sent)).toEqual([...exampleTurns("What is two plus two?", "What is three plus three?", "Name a color."), inputTurn])
  })

  it("sends the input alone when the variant has no examples yet", async () => {
    const response = await gateway.post("/inference", { function_name: "answer", variant_name: "dicl_empty", input })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.content).toEqual([{ type: "text", text: "learned from 0" }])
    expect(conversation(chat.requests[0])).toEqual([inputTurn])
  })

  it("streams the model's answer to the examples", async () => {
    const response = await gateway.stream("/inference", { function_name: "answer", variant_name: "dicl", input, stream: true })
    expect(response.status).toBe(200)
    const text = response.events.filter((event) => event.content !== undefined).flatMap((event) => event.content).map((block: any) => block.text ?? "").join("")
    expect(text).toBe("learned from 2")
    expect(chat.requests[0].body.stream).toBe(true)
    expect(conversation(chat.requests[0])).toEqual([...exampleTurns("What is two plus two?", "What is three plus three?"), inputTurn])
    const embeddingTokens = diclInputText(input).split(/\s+/).length
    expect(response.events.at(-2).usage).toMatchObject({ input_tokens: 12 + embeddingTokens, output_tokens: 7 })
  })

  it("stores the embedding call as a model inference of the inference", async () => {
    const response = await gateway.post("/inference", { function_name: "answer", input })
    const stored = await waitForInference(gateway, response.body.inference_id, { include_model_inferences: true })
    expect(stored.variant_name).toBe("dicl")
    expect(stored.output).toEqual([{ type: "text", text: "learned from 2" }])
    const calls: Array<any> = stored.model_inferences
    expect(calls.map((call) => call.model_name).sort()).toEqual(["learner", "small"])
    const embedding = calls.find((call) => call.model_name === "small")
    expect(embedding.model_provider_name).toBe("fake")
    expect(JSON.parse(embedding.raw_request).input).toEqual([diclInputText(input)])
    expect(JSON.parse(embedding.raw_response).data[0].embedding).toEqual(query)
    expect(embedding.input_tokens).toBe(diclInputText(input).split(/\s+/).length)
    expect(embedding.output_tokens).toBe(0)
  })

  it("works for json functions: the examples' JSON as the assistant's answers, the output parsed", async () => {
    const response = await gateway.post("/inference", { function_name: "extract", input })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.output).toEqual({ raw: "{\"answer\":\"learned from 1\"}", parsed: { answer: "learned from 1" } })
    expect(conversation(chat.requests[0])).toEqual([
      ["user", diclInputText(chatInput("What is two plus two?"))],
      ["assistant", "{\"answer\":\"four\"}"],
      inputTurn
    ])
  })

  it("fails the variant when its embedding model fails, so the next variant answers", async () => {
    const pinned = await gateway.post("/inference", { function_name: "fallback", variant_name: "dicl_broken", input })
    expect(pinned.status).toBe(502)
    expect(pinned.body.error).toMatch(/broken/)
    expect(pinned.body.error).toMatch(/the fake is failing on purpose/)
    expect(broken.requests.length).toBeGreaterThan(0)
    expect(chat.requests).toHaveLength(0)

    const drawn = await gateway.post("/inference", { function_name: "fallback", input })
    expect(drawn.status, JSON.stringify(drawn.body)).toBe(200)
    expect(drawn.body.variant_name).toBe("plain")
    expect(drawn.body.content).toEqual([{ type: "text", text: "learned from 0" }])
  })
})

describe("DICL without an example store", () => {
  let chat: FakeOpenAi
  let good: FakeEmbeddings
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[chat, good] = await Promise.all([startFakeOpenAi(), startFakeEmbeddings(embedKey)])
    gateway = await startGateway({
      config: config(chat.apiBase, good.apiBase, good.apiBase, false),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: undefined, FAKE_KEY: "sk-fake", EMBED_KEY: embedKey }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await Promise.all([chat?.close(), good?.close()])
  })

  it("fails the variant naming what is missing, without calling the model", async () => {
    const response = await gateway.post("/inference", { function_name: "answer", variant_name: "dicl", input })
    expect(response.status).toBe(502)
    expect(response.body.error).toMatch(/variant "dicl" \(dynamic in-context learning\): there is no example store/)
    expect(chat.requests).toHaveLength(0)
    expect(good.requests).toHaveLength(0)
  })
})
