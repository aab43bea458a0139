/**
 * Cross-provider proof of issue 37's inbound surfaces: `POST /anthropic/v1/messages` driven by
 * the official `@anthropic-ai/sdk` and `POST /openai/v1/responses` driven by the official
 * `openai` SDK, each served by a fake provider of every wire family (Anthropic, OpenAI Chat
 * Completions, OpenAI Responses, Gemini AI Studio, Bedrock Converse), whole and streamed.
 *
 * The fakes are the conformance subjects' (test/conformance/*.ts), answering by the scenario
 * marker in the request (test/support/conformance.ts) and refusing, in their own error format,
 * a request that lacks what the scenario needs; one gateway serves a model per family
 * (`conformance_<family>`), with an analytics database for the Responses surface's
 * `previous_response_id`. Each test asserts what a user observes: the SDK's parsed objects, and
 * the bodies that reached the fake (found by a cell id written in the first user message).
 */
import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signatureFamilyOf } from "../../src/providers/families.ts"
import { subjects as anthropicSubjects } from "../conformance/anthropic.ts"
import { subjects as awsSubjects } from "../conformance/aws.ts"
import { subjects as chatCompletionsSubjects } from "../conformance/chatCompletions.ts"
import { subjects as geminiSubjects } from "../conformance/gemini.ts"
import { subjects as responsesSubjects } from "../conformance/openaiResponses.ts"
import {
  type ConformanceSubject,
  conformanceToolResult,
  marker,
  type RunningFake,
  type Scenario,
  toolResultAnswer
} from "../support/conformance.ts"
import { conformanceModelToml, weatherParameters } from "../support/conformanceConfig.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

interface Family {
  readonly name: string
  readonly subject: ConformanceSubject
  /** the provider type the gateway names when it wraps the family's signatures for a foreign surface */
  readonly providerType: string
  /** the signature its fake puts on the thought of `thought_round_trip`; undefined: it has none (Chat Completions) */
  readonly signature: string | undefined
}

const subjectOf = (subjects: ReadonlyArray<ConformanceSubject>, type: string): ConformanceSubject => {
  const subject = subjects.find((candidate) => candidate.type === type)
  if (subject === undefined) throw new Error(`no conformance subject of type ${type}`)
  return subject
}

const families: ReadonlyArray<Family> = [
  { name: "anthropic", subject: subjectOf(anthropicSubjects, "anthropic"), providerType: "anthropic", signature: "sig-conformance" },
  { name: "chat_completions", subject: subjectOf(chatCompletionsSubjects, "openai"), providerType: "openai", signature: undefined },
  { name: "openai_responses", subject: subjectOf(responsesSubjects, "openai"), providerType: "openai", signature: "gAAAAB-sig-conformance" },
  { name: "gemini", subject: subjectOf(geminiSubjects, "google_ai_studio_gemini"), providerType: "google_ai_studio_gemini", signature: "sig-conformance" },
  { name: "bedrock", subject: subjectOf(awsSubjects, "aws_bedrock"), providerType: "aws_bedrock", signature: "sig-conformance" }
]

/** the families whose thoughts carry a signature, each with the next one of them: where its thought is sent as a foreign one */
const signing = families.filter((family) => family.signature !== undefined)
const foreignPairs = signing.map((family, index) => [family.name, signing[(index + 1) % signing.length].name] as const)

const modes = ["whole", "streamed"] as const
type Mode = typeof modes[number]

const running = new Map<string, RunningFake>()
/** the analytics database: the Responses surface's stored responses, for `previous_response_id` */
let database: TestDatabase
let gateway: RunningGateway

beforeAll(async () => {
  // the fakes side by side, then one gateway with a model per family
  await Promise.all(families.map(async (family) => running.set(family.name, await family.subject.start())))
  const fakes = families.map((family) => ({ family, fake: running.get(family.name)! }))
  database = await freshDatabase("postgres")
  gateway = await startGateway({
    config: [observabilityToml(), ...fakes.map(({ family, fake }) => conformanceModelToml(`conformance_${family.name}`, fake))].join("\n"),
    files: Object.assign({}, ...fakes.map(({ fake }) => fake.files ?? {})),
    env: Object.assign({ GATEWAY_ANALYTICS_DB_URL: database.url }, ...fakes.map(({ fake }) => fake.env)),
    startTimeoutMs: 60_000
  })
}, 120_000)

afterAll(async () => {
  await gateway?.stop()
  await database?.drop()
  await Promise.all([...running.values()].map((fake) => fake.close()))
})

const model = (family: Family) => `conformance_${family.name}`

let cells = 0
/** a text unique to one test, put in its first user message, so that the fake's requests of that test can be told apart */
const newCell = () => `(cell ${++cells})`

/** the bodies the family's fake received in the cell's requests */
const receivedIn = (family: Family, cell: string): ReadonlyArray<any> =>
  running.get(family.name)!.received().filter((body) => JSON.stringify(body).includes(cell))

/** the marker of the text and the parallel tool calls scenarios in each mode (the fakes check a stream was asked for) */
const textScenario = (mode: Mode): Scenario => mode === "whole" ? "text" : "stream"
const parallelScenario = (mode: Mode): Scenario => mode === "whole" ? "parallel_tool_calls" : "streamed_tool_calls"

const familyByName = (name: string) => families.find((family) => family.name === name)!

/** the signature of the family's thought as a surface whose own signatures are `surfaceFamily`'s hands it to its client */
const signatureOnSurface = (family: Family, surfaceFamily: string): string =>
  signatureFamilyOf(family.providerType) === surfaceFamily ? family.signature! : `gateway.v1.${family.providerType}.${family.signature}`

/** the second request of the cell reached the family with its own signature intact, unwrapped */
const expectOwnSignatureSentBack = (family: Family, cell: string) => {
  const [, sentBack] = receivedIn(family, cell)
  if (family.signature !== undefined) expect(JSON.stringify(sentBack)).toContain(JSON.stringify(family.signature))
  expect(JSON.stringify(sentBack)).not.toContain("gateway.v1.")
}

/** the scenario `error`: the fake's 400 raised by the SDK as its typed error, the provider's message in it */
const expectProviderError = async (answer: Promise<unknown>, errorClass: new(...args: Array<any>) => Error & { readonly status?: number }) => {
  const failed = await answer.then(() => undefined, (error: unknown) => error)
  expect(failed).toBeInstanceOf(errorClass)
  expect((failed as InstanceType<typeof errorClass>).status).toBe(400)
  expect((failed as Error).message).toContain("conformance: prompt is too long")
}

/** what reached a foreign family's fake: no signature of another's, wrapped or not */
const expectNoForeignSignature = (received: ReadonlyArray<any>, foreign: Family) => {
  expect(received.length).toBeGreaterThan(0)
  for (const body of received) {
    const text = JSON.stringify(body)
    expect(text).not.toContain(foreign.signature)
    expect(text).not.toContain("gateway.v1.")
  }
}

// ---------------------------------------------------------------- Anthropic Messages

const weatherTool: Anthropic.Tool = { name: "get_weather", description: "Get the weather for a city", input_schema: weatherParameters }

describe("Anthropic Messages surface (@anthropic-ai/sdk)", () => {
  let client: Anthropic
  beforeAll(() => {
    client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "unused-without-auth", maxRetries: 0 })
  })

  /** `messages.create`, or `messages.stream(...).finalMessage()` with the text deltas the helper gave */
  const send = async (mode: Mode, params: Anthropic.MessageCreateParamsNonStreaming) => {
    if (mode === "whole") return { message: await client.messages.create(params), texts: [] as Array<string> }
    const texts: Array<string> = []
    const stream = client.messages.stream(params).on("text", (delta) => texts.push(delta))
    return { message: await stream.finalMessage(), texts }
  }

  const ask = (family: Family, text: string, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) => ({
    model: model(family),
    max_tokens: 256,
    messages: [{ role: "user" as const, content: text }],
    ...extra
  })

  describe.each(families)("served by $name", (family) => {
    it.each(modes)("text (%s)", async (mode) => {
      const { message, texts } = await send(mode, ask(family, `${marker(textScenario(mode))} ${newCell()}`))
      expect(message.content).toEqual([expect.objectContaining({ type: "text", text: "conformance text" })])
      expect(message.stop_reason).toBe("end_turn")
      expect(message.role).toBe("assistant")
      if (mode === "streamed") {
        expect(texts.length).toBeGreaterThanOrEqual(2)
        expect(texts.join("")).toBe("conformance text")
      }
    })

    it.each(modes)("tool call and its tool_result (%s)", async (mode) => {
      const cell = newCell()
      const first = ask(family, `${marker("tool_call")} What is the weather in Paris? ${cell}`, {
        tools: [weatherTool],
        tool_choice: { type: "auto" }
      })
      const { message: call } = await send(mode, first)
      expect(call.content).toEqual([{ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } }])
      expect(call.stop_reason).toBe("tool_use")
      const { message: answer } = await send(mode, {
        ...first,
        messages: [
          ...first.messages,
          { role: "assistant", content: call.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: conformanceToolResult }] }
        ]
      })
      // the fake answers this text only when the call and its result reached it in its format
      expect(answer.content).toEqual([expect.objectContaining({ type: "text", text: toolResultAnswer })])
      expect(receivedIn(family, cell)).toHaveLength(2)
    })

    it.each(modes)("parallel tool calls (%s)", async (mode) => {
      const { message } = await send(mode, ask(family, `${marker(parallelScenario(mode))} Paris and London? ${newCell()}`, {
        tools: [weatherTool],
        tool_choice: { type: "auto" }
      }))
      expect(message.content).toEqual([
        { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "call_2", name: "get_weather", input: { city: "London" } }
      ])
      expect(message.stop_reason).toBe("tool_use")
    })

    it.each(modes)("usage in Anthropic's convention (%s)", async (mode) => {
      const { message } = await send(mode, ask(family, `${marker("usage")} ${newCell()}`))
      expect(message.content).toEqual([expect.objectContaining({ type: "text", text: "conformance text" })])
      // 11 input tokens, 3 of them read from the cache: Anthropic counts them apart
      expect(message.usage).toMatchObject({ input_tokens: 8, cache_read_input_tokens: 3, output_tokens: 7 })
    })

    it.each(modes)("a provider's error as the SDK's BadRequestError (%s)", async (mode) => {
      await expectProviderError(send(mode, ask(family, `${marker("error")} ${newCell()}`)), Anthropic.BadRequestError)
    })

    it.each(modes)("thinking sent back as the SDK returned it (%s)", async (mode) => {
      const cell = newCell()
      const first = ask(family, `${marker("thought_round_trip")} ${cell}`, { max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 } })
      const { message: thought } = await send(mode, first)
      // a thought without a signature (Chat Completions') has an empty one
      const expectedSignature = family.signature === undefined ? "" : signatureOnSurface(family, "anthropic")
      expect(thought.content).toEqual([
        expect.objectContaining({ type: "thinking", thinking: "thinking", signature: expectedSignature }),
        expect.objectContaining({ type: "text", text: "first" })
      ])
      const { message: second } = await send(mode, {
        ...first,
        messages: [...first.messages, { role: "assistant", content: thought.content }, { role: "user", content: marker("thought_round_trip_2") }]
      })
      expect(second.content).toEqual([expect.objectContaining({ type: "text", text: "second" })])
      expectOwnSignatureSentBack(family, cell)
    })
  })

  it.each(foreignPairs)("a thought of %s sent to %s arrives without its signature", async (makerName, otherName) => {
    const maker = familyByName(makerName)
    const other = familyByName(otherName)
    const cell = newCell()
    const first = ask(maker, `${marker("thought_round_trip")} ${cell}`, { max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 } })
    const thought = await client.messages.create(first)
    expect(thought.content[0]).toMatchObject({ type: "thinking", signature: signatureOnSurface(maker, "anthropic") })
    // the conversation, the thought included, continued on another family's model (which answers a thought again)
    const continued = await client.messages.create({
      ...first,
      model: model(other),
      messages: [...first.messages, { role: "assistant", content: thought.content }, { role: "user", content: "And then?" }]
    })
    expect(continued.content).toContainEqual(expect.objectContaining({ type: "text", text: "first" }))
    expectNoForeignSignature(receivedIn(other, cell), maker)
  })
})

// ---------------------------------------------------------------- OpenAI Responses

const weatherFunction: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: weatherTool.name,
  description: weatherTool.description,
  parameters: weatherParameters,
  strict: true
}

describe("OpenAI Responses surface (openai SDK)", () => {
  let client: OpenAI
  beforeAll(() => {
    client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: "unused-without-auth", maxRetries: 0 })
  })

  /** a request whose input is a list of items (the conversation the tests extend) */
  type Params = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "input" | "stream"> & { input: Array<OpenAI.Responses.ResponseInputItem> }

  /** `responses.create`, or `responses.stream(...).finalResponse()` with the text deltas it streamed */
  const send = async (mode: Mode, params: Params) => {
    if (mode === "whole") return { response: await client.responses.create(params), texts: [] as Array<string> }
    const texts: Array<string> = []
    const stream = client.responses.stream(params).on("response.output_text.delta", (event) => texts.push(event.delta))
    return { response: await stream.finalResponse(), texts }
  }

  const ask = (family: Family, text: string, extra: Partial<Params> = {}): Params => ({
    model: model(family),
    input: [{ role: "user", content: text }],
    store: false,
    ...extra
  })

  const functionCall = (callId: string, city: string) =>
    expect.objectContaining({ type: "function_call", call_id: callId, name: "get_weather", arguments: JSON.stringify({ city }) })

  describe.each(families)("served by $name", (family) => {
    it.each(modes)("text (%s)", async (mode) => {
      const { response, texts } = await send(mode, ask(family, `${marker(textScenario(mode))} ${newCell()}`))
      expect(response.status).toBe("completed")
      expect(response.output_text).toBe("conformance text")
      expect(response.output).toEqual([
        expect.objectContaining({ type: "message", role: "assistant", content: [expect.objectContaining({ type: "output_text", text: "conformance text" })] })
      ])
      if (mode === "streamed") {
        expect(texts.length).toBeGreaterThanOrEqual(2)
        expect(texts.join("")).toBe("conformance text")
      }
    })

    it.each(modes)("function call and its function_call_output (%s)", async (mode) => {
      const cell = newCell()
      const first = ask(family, `${marker("tool_call")} What is the weather in Paris? ${cell}`, { tools: [weatherFunction], tool_choice: "auto" })
      const { response: call } = await send(mode, first)
      expect(call.output).toEqual([functionCall("call_1", "Paris")])
      const { response: answer } = await send(mode, {
        ...first,
        input: [...first.input, ...call.output as Array<OpenAI.Responses.ResponseInputItem>, {
          type: "function_call_output",
          call_id: "call_1",
          output: conformanceToolResult
        }]
      })
      // the fake answers this text only when the call and its output reached it in its format
      expect(answer.output_text).toBe(toolResultAnswer)
      expect(receivedIn(family, cell)).toHaveLength(2)
    })

    it.each(modes)("function call continued by previous_response_id with its function_call_output (%s)", async (mode) => {
      const cell = newCell()
      const first = ask(family, `${marker("tool_call")} What is the weather in Paris? ${cell}`, {
        tools: [weatherFunction],
        tool_choice: "auto",
        store: true
      })
      const { response: call } = await send(mode, first)
      expect(call.output).toEqual([functionCall("call_1", "Paris")])
      // the stored conversation (the question and the call) comes before the new input
      const { response: answer } = await send(mode, {
        ...first,
        store: false,
        previous_response_id: call.id,
        input: [{ type: "function_call_output", call_id: "call_1", output: conformanceToolResult }]
      })
      expect(answer.output_text).toBe(toolResultAnswer)
      expect(answer.previous_response_id).toBe(call.id)
      expect(receivedIn(family, cell)).toHaveLength(2)
    })

    it.each(modes)("parallel function calls (%s)", async (mode) => {
      const { response } = await send(mode, ask(family, `${marker(parallelScenario(mode))} Paris and London? ${newCell()}`, {
        tools: [weatherFunction],
        tool_choice: "auto"
      }))
      expect(response.output).toEqual([functionCall("call_1", "Paris"), functionCall("call_2", "London")])
    })

    it.each(modes)("usage in OpenAI's convention (%s)", async (mode) => {
      const { response } = await send(mode, ask(family, `${marker("usage")} ${newCell()}`))
      expect(response.output_text).toBe("conformance text")
      // 11 input tokens, the 3 read from the cache among them
      expect(response.usage).toMatchObject({ input_tokens: 11, input_tokens_details: { cached_tokens: 3 }, output_tokens: 7, total_tokens: 18 })
    })

    it.each(modes)("a provider's error as the SDK's BadRequestError (%s)", async (mode) => {
      await expectProviderError(send(mode, ask(family, `${marker("error")} ${newCell()}`)), OpenAI.BadRequestError)
    })

    it.each(modes)("reasoning sent back as the SDK returned it (%s)", async (mode) => {
      const cell = newCell()
      const first = ask(family, `${marker("thought_round_trip")} ${cell}`, { include: ["reasoning.encrypted_content"] })
      const { response } = await send(mode, first)
      const reasoning = response.output.find((item) => item.type === "reasoning")
      expect(reasoning).toMatchObject({ type: "reasoning", summary: [{ type: "summary_text", text: "thinking" }] })
      // a thought without a signature (Chat Completions') has a null encrypted_content
      expect(reasoning).toMatchObject({ encrypted_content: family.signature === undefined ? null : signatureOnSurface(family, "openai") })
      expect(response.output_text).toBe("first")
      const { response: second } = await send(mode, {
        ...first,
        input: [...first.input, ...response.output as Array<OpenAI.Responses.ResponseInputItem>, { role: "user", content: marker("thought_round_trip_2") }]
      })
      expect(second.output_text).toBe("second")
      expectOwnSignatureSentBack(family, cell)
    })
  })

  it.each(foreignPairs)("a reasoning item of %s sent to %s arrives without its signature", async (makerName, otherName) => {
    const maker = familyByName(makerName)
    const other = familyByName(otherName)
    const cell = newCell()
    const first = ask(maker, `${marker("thought_round_trip")} ${cell}`, { include: ["reasoning.encrypted_content"] })
    const response = await client.responses.create(first)
    expect(response.output[0]).toMatchObject({ type: "reasoning", encrypted_content: signatureOnSurface(maker, "openai") })
    const continued = await client.responses.create({
      ...first,
      model: model(other),
      input: [...first.input, ...response.output as Array<OpenAI.Responses.ResponseInputItem>, { role: "user", content: "And then?" }]
    })
    expect(continued.output_text).toBe("first")
    expectNoForeignSignature(receivedIn(other, cell), maker)
  })
})
