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
 *   the tool call ids hold across the turns.
 * - `/openai/v1/responses` with the official `openai` SDK (`responses.stream()`): the client
 *   resending the whole conversation each turn, and, with an analytics database, sending only
 *   the new `function_call_output` with `previous_response_id`.
 */
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { anthropicModelToml, type AnthropicRequest, type FakeAnthropic, message, startFakeAnthropic } from "../support/fakeAnthropic.ts"
import {
  type FakeOpenAi,
  openAiProviderToml,
  type ReceivedRequest,
  startFakeOpenAi,
  textStreamChunks,
  toolCallStreamChunks
} from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

const config = (anthropic: FakeAnthropic, openai: FakeOpenAi) => `
${observabilityToml()}
${anthropicModelToml("claude-sonnet-4-5", "claude-sonnet-4-5", anthropic.apiBase, "env::TEST_ANTHROPIC_KEY")}
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

describe("a coding agent's session", () => {
  let anthropic: FakeAnthropic
  let openai: FakeOpenAi
  let database: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[anthropic, openai, database] = await Promise.all([startFakeAnthropic({ apiKey: "sk-ant-upstream" }), startFakeOpenAi(), freshDatabase("postgres")])
    gateway = await startGateway({
      config: config(anthropic, openai),
      env: { TEST_ANTHROPIC_KEY: "sk-ant-upstream", GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
    await openai?.close()
    await anthropic?.close()
  })
  beforeEach(() => {
    anthropic.reset()
    openai.reset()
  })

  describe("through /anthropic/v1/messages", () => {
    const steps = 11
    const anthropicClient = () => new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "unused-without-auth", maxRetries: 0 })

    /** the session: each turn streamed, its answer sent back as the SDK returned it with the tool's result, until a text */
    const session = async (modelOf: (turn: number) => string) => {
      const client = anthropicClient()
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
})
