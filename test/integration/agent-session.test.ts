/**
 * A coding agent's session (issue 37): a tool-use loop of a dozen streamed turns, the client
 * sending back each answer as its SDK returned it with the tools' results (some of them
 * errors), until the model answers text. The fakes answer from the request (the number of tool
 * results it carries says which step comes next), as a model would.
 *
 * - `/anthropic/v1/messages` with the official `@anthropic-ai/sdk` (`messages.stream()`,
 *   thinking on): onto an Anthropic-type provider, every earlier thinking block reaches it with
 *   its signature byte for byte and every tool_use and tool_result in place; onto an OpenAI Chat
 *   Completions provider (its reasoning as `reasoning_content`), no signature ever reaches it and
 *   the tool call ids hold across the turns; changing model halfway, Claude's signatures stay
 *   behind and its calls and results go on.
 * - `/openai/v1/responses` with the official `openai` SDK (`responses.stream()`), onto both
 *   providers: the client resending the whole conversation each turn, and, with an analytics
 *   database, sending only the new `function_call_output` with `previous_response_id`; the
 *   provider gets the whole conversation in order each turn (Claude's thoughts signed as it
 *   signed them), and `input_items` lists it.
 */
import Anthropic from "@anthropic-ai/sdk"
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type AnthropicSurface, anthropicSurfaceConfig, startAnthropicSurface } from "../support/anthropicSurface.ts"
import { type AnthropicRequest, type FakeAnthropic, message } from "../support/fakeAnthropic.ts"
import {
  type FakeOpenAi,
  openAiProviderToml,
  type ReceivedRequest,
  startFakeOpenAi,
  textStreamChunks,
  toolCallStreamChunks
} from "../support/fakeOpenAi.ts"
import type { RunningGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

/** the surfaces' configuration (`claude-sonnet-4-5` onto the fake Anthropic), an analytics database, and `gpt-agent` onto the fake OpenAI */
const config = (anthropic: FakeAnthropic, openai: FakeOpenAi) => `
${observabilityToml()}
${anthropicSurfaceConfig(anthropic, {})}
[models.gpt-agent]
routing = ["openai"]
${openAiProviderToml("gpt-agent", "openai", "gpt-4o", openai.apiBase, "none")}
`

const task = "The test suite fails: find out why and fix it."

/** the agent's tools: step `n` of the session uses `read_file` when even, `run_command` when odd */
const agentTools = [
  {
    name: "read_file",
    description: "Reads a file of the repository",
    input_schema: { type: "object" as const, properties: { path: { type: "string" } }, required: ["path"] }
  },
  {
    name: "run_command",
    description: "Runs a shell command in the repository",
    input_schema: { type: "object" as const, properties: { command: { type: "string" } }, required: ["command"] }
  }
]

/** the tool call of step `n`: its name and arguments */
const stepCall = (n: number) =>
  n % 2 === 0 ? { name: "read_file", input: { path: `src/module${n}.ts` } } : { name: "run_command", input: { command: `npm test -- --shard ${n}` } }

/** what the client's tool answers at step `n`: every fourth call fails */
const stepResult = (n: number) => n % 4 === 3 ? { content: `exit code 1: test ${n} failed`, isError: true } : { content: `output of step ${n}`, isError: false }

/** a signature as Anthropic makes them (base64, with `+`, `/` and padding), different at each step */
const stepSignature = (n: number) => `EqQBCkYIARgCKkB${Buffer.from(`signature of step ${n} \u00ff\u00fe`).toString("base64")}+/==`

const finalText = "Fixed: the off-by-one in module 4 made the tests fail."

/** the tool results a Messages request carries: the step the model is at */
const anthropicStep = (body: any): number =>
  body.messages.filter((m: any) => m.role === "user" && Array.isArray(m.content)).flatMap((m: any) => m.content)
    .filter((block: any) => block.type === "tool_result").length

/**
 * The fake Anthropic model of a session of `steps` tool calls: at step n < steps, a thought
 * (signed), on every third step a text, and a tool call; then a thought and the final text.
 * `issued` keeps each answer's content, by step.
 */
const anthropicAgent = (steps: number, issued: Array<ReadonlyArray<any>>) => (request: AnthropicRequest) => {
  const n = anthropicStep(request.body)
  const thinking = { type: "thinking", thinking: `Step ${n}: what next?`, signature: stepSignature(n) }
  const content = n === steps
    ? [thinking, { type: "text", text: finalText }]
    : [
      thinking,
      ...(n % 3 === 0 ? [{ type: "text", text: `Let me look at step ${n}.` }] : []),
      { type: "tool_use", id: `toolu_${n}_${Math.random().toString(36).slice(2, 10)}`, ...stepCall(n) }
    ]
  issued[n] = content
  return { kind: "message" as const, body: { ...message(content), id: `msg_step${n}` } }
}

/** the tool messages a Chat Completions request carries: the step the model is at */
const chatStep = (body: any): number => body.messages.filter((m: any) => m.role === "tool").length

/**
 * The fake Chat Completions model of a session of `steps` tool calls, streamed: at step n <
 * steps, reasoning (`reasoning_content`) on even steps and a tool call; then the final text.
 * `issued` keeps each step's call id.
 */
const chatAgent = (steps: number, issued: Array<string>) => (request: ReceivedRequest) => {
  const n = chatStep(request.body)
  if (n === steps) return { kind: "stream" as const, chunks: textStreamChunks(["Fixed: the off-by-one ", "in module 4 made the tests fail."]) }
  const id = `call_${n}_${Math.random().toString(36).slice(2, 10)}`
  issued[n] = id
  const call = stepCall(n)
  const [head, ...rest] = toolCallStreamChunks([{ id, function: { name: call.name, arguments: JSON.stringify(call.input) } }])
  const reasoning = n % 2 === 0
    ? [{ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { reasoning_content: `Step ${n}: what next?` }, finish_reason: null }] }]
    : []
  return { kind: "stream" as const, chunks: [head, ...reasoning, ...rest] }
}

/** the tool_use block of an answer's content */
const toolUseOf = (content: ReadonlyArray<any>) => content.find((block) => block.type === "tool_use")

/**
 * The messages an Anthropic-type provider is sent at `turn`: the task, then each earlier step's
 * answer as the fake wrote it (thought and signature, text, tool_use) and its tool's result
 * (`is_error` when `errors`: the Responses API has no such flag).
 */
const anthropicConversation = (issued: ReadonlyArray<ReadonlyArray<any>>, turn: number, options: { readonly errors: boolean }) => [
  { role: "user", content: [{ type: "text", text: task }] },
  ...Array.from({ length: turn }, (_, n) => {
    const result = stepResult(n)
    return [
      { role: "assistant", content: issued[n] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: toolUseOf(issued[n]).id, content: result.content, ...(options.errors && result.isError ? { is_error: true } : {}) }]
      }
    ]
  }).flat()
]

/**
 * The messages a Chat Completions provider is sent at `turn`: the task, then each earlier step's
 * call (with the text of `anthropicIssued`'s answer, for steps Claude made; no thought) and its
 * tool message, by the call's id.
 */
const chatConversation = (ids: ReadonlyArray<string>, turn: number, anthropicIssued: ReadonlyArray<ReadonlyArray<any>> = []) => [
  { role: "user", content: task },
  ...Array.from({ length: turn }, (_, n) => [
    {
      role: "assistant",
      content: anthropicIssued[n]?.find((block) => block.type === "text")?.text ?? null,
      tool_calls: [{ id: ids[n], type: "function", function: { name: stepCall(n).name, arguments: JSON.stringify(stepCall(n).input) } }]
    },
    { role: "tool", tool_call_id: ids[n], content: stepResult(n).content }
  ]).flat()
]

/** an input or output item of the Responses API as what it says: a message's role and text, a thought's text, a call, a call's output */
const itemSummary = (item: any): Array<unknown> => {
  switch (item.type ?? "message") {
    case "message":
      return ["message", item.role, typeof item.content === "string" ? item.content : item.content.map((part: any) => part.text).join("")]
    case "reasoning":
      return ["reasoning", item.summary.map((part: any) => part.text).join("\n\n")]
    case "function_call":
      return ["function_call", item.call_id, item.name, item.arguments]
    case "function_call_output":
      return ["function_call_output", item.call_id, item.output]
    default:
      return [item.type]
  }
}

describe("a coding agent's session", () => {
  let anthropic: FakeAnthropic
  let openai: FakeOpenAi
  let database: TestDatabase
  let surface: AnthropicSurface
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[openai, database] = await Promise.all([startFakeOpenAi(), freshDatabase("postgres")])
    surface = await startAnthropicSurface((fake) => config(fake, openai), { GATEWAY_ANALYTICS_DB_URL: database.url })
    ;({ anthropic, gateway } = surface)
  })
  afterAll(async () => {
    await surface?.stop()
    await database?.drop()
    await openai?.close()
  })
  beforeEach(() => {
    anthropic.reset()
    openai.reset()
  })

  describe("through /anthropic/v1/messages", () => {
    const steps = 11

    /** the session: each turn streamed, its answer sent back as the SDK returned it with the tool's result, until a text */
    const session = async (modelOf: (turn: number) => string) => {
      const { client } = surface
      const messages: Array<Anthropic.MessageParam> = [{ role: "user", content: task }]
      const answers: Array<Anthropic.Message> = []
      for (let turn = 0; turn <= steps; turn++) {
        const answer = await client.messages.stream({
          model: modelOf(turn),
          max_tokens: 8000,
          thinking: { type: "enabled", budget_tokens: 4000 },
          tools: agentTools,
          messages: messages.slice()
        }).finalMessage()
        answers.push(answer)
        messages.push({ role: "assistant", content: answer.content })
        const call = answer.content.find((block) => block.type === "tool_use")
        if (call === undefined) break
        const result = stepResult(turn)
        messages.push({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: call.id, content: result.content, ...(result.isError ? { is_error: true } : {}) }]
        })
      }
      return { messages, answers }
    }

    it("onto an Anthropic provider: 12 streamed turns, every earlier thought with its signature byte for byte, every tool_use and tool_result in place", async () => {
      const issued: Array<ReadonlyArray<any>> = []
      anthropic.fallback = anthropicAgent(steps, issued)
      const { answers } = await session(() => "claude-sonnet-4-5")
      expect(answers).toHaveLength(steps + 1)
      expect(anthropic.requests).toHaveLength(steps + 1)
      answers.forEach((answer, turn) => {
        // the thoughts' signatures, the fake's tool_use ids and parsed inputs, as the fake wrote them
        expect(answer.content, `turn ${turn}`).toEqual(issued[turn])
        expect(answer.stop_reason).toBe(turn < steps ? "tool_use" : "end_turn")
        expect(anthropic.requests[turn].body.stream).toBe(true)
        expect(anthropic.requests[turn].body.messages, `turn ${turn}`).toEqual(anthropicConversation(issued, turn, { errors: true }))
      })
      expect(answers[steps].content.at(-1)).toEqual({ type: "text", text: finalText })
    })

    it("onto an OpenAI Chat Completions provider: its reasoning as thinking, no signature upstream, the call ids kept across 12 turns", async () => {
      const issued: Array<string> = []
      openai.fallback = chatAgent(steps, issued)
      const { answers } = await session(() => "gpt-agent")
      expect(answers).toHaveLength(steps + 1)
      expect(openai.requests).toHaveLength(steps + 1)
      answers.forEach((answer, turn) => {
        if (turn === steps) return
        const call = stepCall(turn)
        expect(answer.content, `turn ${turn}`).toEqual([
          // an unsigned thought: the client sends it back with an empty signature, which is none
          ...(turn % 2 === 0 ? [{ type: "thinking", thinking: `Step ${turn}: what next?`, signature: "" }] : []),
          { type: "tool_use", id: issued[turn], ...call }
        ])
        expect(answer.stop_reason).toBe("tool_use")
        expect(openai.requests[turn].body.messages, `turn ${turn}`).toEqual(chatConversation(issued, turn))
      })
      expect(answers[steps].content).toEqual([{ type: "text", text: finalText }])
      expect(answers[steps].stop_reason).toBe("end_turn")
    })

    it("changing model halfway, from Anthropic to OpenAI: the thoughts' signatures stay behind, the tool_use ids and results go on", async () => {
      const claudeIssued: Array<ReadonlyArray<any>> = []
      const gptIssued: Array<string> = []
      anthropic.fallback = anthropicAgent(steps, claudeIssued)
      openai.fallback = chatAgent(steps, gptIssued)
      const half = 6
      const { answers } = await session((turn) => (turn < half ? "claude-sonnet-4-5" : "gpt-agent"))
      expect(answers).toHaveLength(steps + 1)
      expect(anthropic.requests).toHaveLength(half)
      expect(openai.requests).toHaveLength(steps + 1 - half)
      const ids = [...claudeIssued.slice(0, half).map((content) => toolUseOf(content).id), ...gptIssued.slice(half)]
      openai.requests.forEach((request, i) => {
        const body = JSON.stringify(request.body)
        expect(body).not.toContain("signature")
        for (let n = 0; n < half; n++) expect(body).not.toContain(stepSignature(n))
        // Claude's thoughts are not sent to another family; its text, calls and their results are
        expect(request.body.messages).toEqual(chatConversation(ids, half + i, claudeIssued))
      })
    })
  })

  describe.each([
    { provider: "an OpenAI Chat Completions provider", model: "gpt-agent" },
    { provider: "an Anthropic provider", model: "claude-sonnet-4-5" }
  ])("through /openai/v1/responses onto $provider", ({ model }) => {
    const steps = 9
    const functionTools: Array<OpenAI.Responses.FunctionTool> = agentTools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.input_schema,
      strict: false
    }))

    /**
     * The session: each turn streamed; `stateless`, the client sends the whole conversation (its
     * answers' items as the SDK returned them) each turn, else only the new function_call_output
     * with previous_response_id.
     */
    const session = async (mode: "stateless" | "stored") => {
      const client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: "unused-without-auth", maxRetries: 0 })
      const conversation: Array<OpenAI.Responses.ResponseInputItem> = [{ role: "user", content: task }]
      const responses: Array<OpenAI.Responses.Response> = []
      let next = conversation.slice()
      for (let turn = 0; turn <= steps; turn++) {
        const previous = responses.at(-1)
        const response = await client.responses.stream({
          model,
          tools: functionTools,
          include: ["reasoning.encrypted_content"],
          max_output_tokens: 8000,
          ...(mode === "stateless"
            ? { input: conversation.slice(), store: false }
            : { input: next, ...(previous === undefined ? {} : { previous_response_id: previous.id }) })
        }).finalResponse()
        responses.push(response)
        conversation.push(...response.output as Array<OpenAI.Responses.ResponseInputItem>)
        const call = response.output.find((item) => item.type === "function_call")
        if (call === undefined) break
        const output: OpenAI.Responses.ResponseInputItem = { type: "function_call_output", call_id: call.call_id, output: stepResult(turn).content }
        conversation.push(output)
        next = [output]
      }
      return { client, conversation, responses }
    }

    it.each(["stateless", "stored"] as const)("runs a 10-turn function-calling loop, %s", async (mode) => {
      const issuedCalls: Array<string> = []
      const issuedContent: Array<ReadonlyArray<any>> = []
      openai.fallback = chatAgent(steps, issuedCalls)
      anthropic.fallback = anthropicAgent(steps, issuedContent)
      const { client, conversation, responses } = await session(mode)
      const viaChat = model === "gpt-agent"
      /** the items of step `turn`'s answer, as the fake wrote it */
      const issuedItems = (turn: number) =>
        viaChat
          ? turn === steps
            ? [["message", "assistant", finalText]]
            : [
              ...(turn % 2 === 0 ? [["reasoning", `Step ${turn}: what next?`]] : []),
              ["function_call", issuedCalls[turn], stepCall(turn).name, JSON.stringify(stepCall(turn).input)]
            ]
          : issuedContent[turn].map((block) =>
            block.type === "thinking"
              ? ["reasoning", block.thinking]
              : block.type === "text"
              ? ["message", "assistant", block.text]
              : ["function_call", block.id, block.name, JSON.stringify(block.input)]
          )

      expect(responses).toHaveLength(steps + 1)
      const requests = viaChat ? openai.requests : anthropic.requests
      expect(requests).toHaveLength(steps + 1)
      responses.forEach((response, turn) => {
        expect(response.status).toBe("completed")
        expect((response as any).store).toBe(mode === "stored")
        expect(response.previous_response_id).toBe(mode === "stored" && turn > 0 ? responses[turn - 1].id : null)
        // the fake's call ids, its thoughts (Claude's signed: the signature wrapped with its maker's type)
        expect(response.output.map(itemSummary), `turn ${turn}`).toEqual(issuedItems(turn))
        for (const item of response.output) {
          if (item.type === "reasoning") expect(item.encrypted_content).toBe(viaChat ? null : `gateway.v1.anthropic.${stepSignature(turn)}`)
        }
        // the whole conversation, in order, each turn: thoughts (Claude's signed), calls, their outputs
        expect(requests[turn].body.stream).toBe(true)
        expect(requests[turn].body.messages, `turn ${turn}`).toEqual(
          viaChat ? chatConversation(issuedCalls, turn) : anthropicConversation(issuedContent, turn, { errors: false })
        )
      })
      expect(responses[steps].output_text).toBe(finalText)
      if (mode === "stateless") return

      // one episode, which each continued response joins
      expect(new Set(responses.map((response) => (response as any).gateway_episode_id)).size).toBe(1)

      // the stored conversation: what the last turn continued
      const last = responses[steps]
      const items = await client.responses.inputItems.list(last.id, { order: "asc", limit: 100 })
      const before = conversation.slice(0, conversation.length - last.output.length)
      expect(items.has_more).toBe(false)
      expect(items.data.map(itemSummary)).toEqual(before.map(itemSummary))
      expect(items.data.filter((item) => item.type === "function_call_output")).toHaveLength(steps)
    })
  })
})
