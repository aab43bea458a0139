/**
 * The real coding agents, headless and offline, through the gateway (issue 37): Claude Code
 * (`claude -p`, its pinned native build installed by scripts/installAgents.ts into
 * test-artifacts/agents/) with `ANTHROPIC_BASE_URL=<gateway>/anthropic` completes a task that
 * needs a tool call (its `Write` tool creating a file), answered by a fake Anthropic server and,
 * through the same Messages surface, by a fake OpenAI Chat Completions server. The fakes answer
 * whatever the agent asks (it may make requests of its own besides the task's): the tool call
 * while the last message has no tool result, then a final text. The agent reaches nothing
 * else: its proxy is a local port that refuses (and records) every connection, and telemetry,
 * updates and other non-essential traffic are off (without that, 2.1.332 tries
 * `CONNECT api.anthropic.com:443` through the proxy, and the test says so).
 * What Claude Code sends: `POST /anthropic/v1/messages?beta=true`, streamed, with `x-api-key`,
 * `anthropic-version: 2023-06-01` and `anthropic-beta`; to a model it knows by name its context
 * rides in the user's message, to one it does not (the OpenAI one here) in `role: "system"`
 * messages, which the gateway joins to the system prompt.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { claudeCode, ensureAgent } from "../../scripts/installAgents.ts"
import { anthropicSurfaceConfig, startAnthropicSurface } from "../support/anthropicSurface.ts"
import { type FakeAnthropic, message, textMessage } from "../support/fakeAnthropic.ts"
import { type FakeOpenAi, openAiProviderToml, startFakeOpenAi, textStreamChunks, toolCallStreamChunks } from "../support/fakeOpenAi.ts"
import type { RunningGateway } from "../support/gateway.ts"

/** the gateway's models Claude Code is pointed at, by the bare names it sends: onto the fake Anthropic (anthropicSurface.ts), onto the fake OpenAI */
const anthropicModel = "claude-sonnet-4-5"
const openAiModel = "gpt-answers-claude"

const config = (anthropic: FakeAnthropic, openai: FakeOpenAi) => `${anthropicSurfaceConfig(anthropic, {})}
[models."${openAiModel}"]
routing = ["openai"]
${openAiProviderToml(`"${openAiModel}"`, "openai", "gpt-fake", openai.apiBase, "none")}`

const fileName = "greeting.txt"
const fileContent = "Hello from Claude Code through the gateway\n"
const finalText = `I wrote ${fileName}.`
const task = `Create a file named ${fileName} in the current directory containing the line "Hello from Claude Code through the gateway".`

type Json = Record<string, any>

/** the blocks of a Messages request's last message */
const lastBlocks = (body: Json): Array<Json> => {
  const content = body.messages?.at(-1)?.content
  return Array.isArray(content) ? content : []
}

/** a local port that takes connections, records their first line (`CONNECT host:443 ...`) and closes them: the agent's proxy */
const startRefusingProxy = async () => {
  const attempts: Array<string> = []
  const server = net.createServer((socket) => {
    socket.once("data", (data) => {
      attempts.push(data.toString("latin1").split("\r\n")[0])
      socket.destroy()
    })
    socket.on("error", () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    attempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

interface AgentRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** the temporary working directory the agent ran in */
  readonly cwd: string
  readonly ms: number
}

describe("Claude Code through the Anthropic Messages surface", () => {
  let claude: string
  let anthropic: FakeAnthropic
  let openai: FakeOpenAi
  let gateway: RunningGateway
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>
  const scratch: Array<string> = []
  /** the working directory of the run in progress: where the fakes' Write call puts the file */
  let cwd = ""

  beforeAll(async () => {
    claude = ensureAgent(claudeCode)
    ;[openai, proxy] = await Promise.all([startFakeOpenAi(), startRefusingProxy()])
    ;({ anthropic, gateway } = await startAnthropicSurface((anthropic) => config(anthropic, openai)))
  }, 300_000)
  afterAll(async () => {
    await gateway?.stop()
    await Promise.all([anthropic?.close(), openai?.close(), proxy?.close()])
    for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true })
  })

  /** `claude -p <task>` in a new working directory and home, against the gateway's `model`, offline */
  const runClaude = (model: string): Promise<AgentRun> => {
    const scratchRoot = process.env.GATEWAY_TEST_SCRATCH ?? os.tmpdir()
    const home = fs.mkdtempSync(path.join(scratchRoot, "agents-home-"))
    cwd = fs.mkdtempSync(path.join(scratchRoot, "agents-work-"))
    scratch.push(home, cwd)
    // a fresh environment: nothing of this process's (a key of its own, a coding client's variables) reaches the agent
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: os.tmpdir(),
      ANTHROPIC_BASE_URL: `${gateway.url}/anthropic`,
      ANTHROPIC_API_KEY: "sk-gateway-unused",
      ANTHROPIC_MODEL: model,
      ANTHROPIC_DEFAULT_OPUS_MODEL: model,
      ANTHROPIC_DEFAULT_SONNET_MODEL: model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      ANTHROPIC_SMALL_FAST_MODEL: model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      HTTPS_PROXY: proxy.url,
      HTTP_PROXY: proxy.url,
      https_proxy: proxy.url,
      http_proxy: proxy.url,
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost"
    }
    const args = ["-p", task, "--output-format", "json", "--allowedTools", "Write", "--permission-mode", "acceptEdits", "--no-session-persistence"]
    const started = performance.now()
    return new Promise((resolve, reject) => {
      const child = spawn(claude, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (data) => (stdout += data))
      child.stderr.on("data", (data) => (stderr += data))
      const timer = setTimeout(() => child.kill("SIGKILL"), 90_000)
      child.on("error", reject)
      child.on("close", (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr, cwd, ms: performance.now() - started })
      })
    })
  }

  const describeRequests = (requests: ReadonlyArray<{ readonly path: string; readonly body: Json }>) =>
    requests.map(({ path, body }) => {
      const tools = (body.tools ?? []).map((tool: Json) => tool.name ?? tool.function?.name).join(",")
      return `${path} model=${body.model} stream=${body.stream} messages=${body.messages?.length} tools=${tools}`
    }).join("\n")

  /** what a user sees of a completed task: exit 0, the final text in the JSON result, the file written; nothing reached out */
  const expectCompleted = (run: AgentRun, received: ReadonlyArray<{ readonly path: string; readonly body: Json }>) => {
    const context = `exit ${run.code} in ${Math.round(run.ms)} ms\nstdout: ${run.stdout}\nstderr: ${run.stderr}\n` +
      `the fake received:\n${describeRequests(received)}\nconnections to the proxy: ${proxy.attempts.join("; ")}\ngateway log:\n${gateway.log().slice(-4000)}`
    expect(run.code, context).toBe(0)
    expect(JSON.parse(run.stdout), context).toMatchObject({ type: "result", subtype: "success", is_error: false, result: finalText })
    expect(fs.readFileSync(path.join(run.cwd, fileName), "utf8")).toBe(fileContent)
    expect(proxy.attempts).toEqual([])
  }

  /** a request the fake did not expect (it answers a short text): logged, to see what a new version of the agent asks */
  const unexpected = (fake: string, request: { readonly path: string; readonly body: Json }) => {
    console.warn(`agents-cli: the fake ${fake} answered an unexpected request with a short text: ${describeRequests([request])}`)
  }

  /** the Write call the fakes answer with: the file in the working directory of the run in progress */
  const writeInput = () => ({ file_path: path.join(cwd, fileName), content: fileContent })

  it("completes a task with its Write tool, answered by an Anthropic-type provider: the tool_use goes out, its tool_result comes back", async () => {
    const toolUseId = "toolu_01GatewayWrite"
    anthropic.fallback = (request) => {
      const { body } = request
      if (!(body.tools ?? []).some((tool: Json) => tool.name === "Write")) {
        unexpected("Anthropic", request)
        return { kind: "message", body: textMessage("ok") }
      }
      if (lastBlocks(body).some((block) => block.type === "tool_result")) return { kind: "message", body: textMessage(finalText) }
      return { kind: "message", body: message([{ type: "tool_use", id: toolUseId, name: "Write", input: writeInput() }]) }
    }
    const run = await runClaude(anthropicModel)
    expectCompleted(run, anthropic.requests)
    expect(anthropic.requests.every(({ body }) => body.stream === true)).toBe(true)
    // the second turn: the tool call as answered, then its result
    const messages: Array<Json> = anthropic.requests.at(-1)!.body.messages
    expect(messages.at(-2)).toMatchObject({ role: "assistant", content: [{ type: "tool_use", id: toolUseId, name: "Write", input: writeInput() }] })
    expect(messages.at(-1)).toMatchObject({ role: "user", content: expect.arrayContaining([expect.objectContaining({ type: "tool_result", tool_use_id: toolUseId })]) })
  }, 120_000)

  it("completes the same task answered by an OpenAI Chat Completions provider, to which its system messages go as the system prompt", async () => {
    const callId = "call_gateway_write"
    openai.fallback = (request) => {
      const { body } = request
      if (!(body.tools ?? []).some((tool: Json) => tool.function?.name === "Write")) {
        unexpected("OpenAI", request)
        return { kind: "stream", chunks: textStreamChunks(["ok"]) }
      }
      if (body.messages?.at(-1)?.role === "tool") return { kind: "stream", chunks: textStreamChunks([finalText]) }
      return { kind: "stream", chunks: toolCallStreamChunks([{ id: callId, function: { name: "Write", arguments: JSON.stringify(writeInput()) } }]) }
    }
    const run = await runClaude(openAiModel)
    expectCompleted(run, openai.requests)
    const messages: Array<Json> = openai.requests.at(-1)!.body.messages
    // a model it does not know by name gets Claude Code's context (its working directory...) in system messages
    expect(messages[0]).toMatchObject({ role: "system", content: expect.stringContaining(run.cwd) })
    expect(messages.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ id: callId, function: { name: "Write" } }] })
    expect(messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: callId })
  }, 120_000)
})
