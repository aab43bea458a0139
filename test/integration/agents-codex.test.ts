/**
 * The real OpenAI Codex CLI (`@openai/codex`, installed for this test only by
 * scripts/installCodex.sh into test-artifacts/codex/) as a client of the OpenAI Responses surface:
 * `codex exec`, headless and offline, with a `[model_providers.gateway]` of `wire_api = "responses"`
 * pointed at `<gateway>/openai/v1`, completes a task that needs a tool call (its `exec_command`
 * shell tool writes a file), once with the gateway's model answered by a fake OpenAI Responses
 * API and once by a fake Chat Completions API. The fakes answer by what the request carries (a
 * tool's output last: the final text; otherwise the tool call), whatever order Codex sends them in.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { completion, type FakeOpenAi, openAiProviderToml, startFakeOpenAi, type ReceivedRequest, textStreamChunks, toolCallStreamChunks } from "../support/fakeOpenAi.ts"
import { answer, functionCallItem, messageItem, responseObject, responsesFakeKey, startFakeOpenAiResponses } from "../support/fakeOpenAiResponses.ts"
import type { WireRequest, WireServer } from "../support/fakeWireServer.ts"
import { repoRoot, runCommand, type RunningGateway, type RunResult, startGateway, writeFiles } from "../support/gateway.ts"

type Json = Record<string, any>

const callId = "call_codex_proof"
const proofText = "written-by-codex-through-the-gateway"
const finalText = "Done: proof.txt holds the text."
/** the shell command the fakes ask Codex to run, in its working directory */
const command = `printf '%s' ${proofText} > proof.txt && cat proof.txt`
const shellTool = "exec_command"

/** a request Codex sent for its turn (it offers its shell tool), and not one of its side requests */
const offersShell = (tools: unknown): boolean => Array.isArray(tools) && tools.some((tool: Json) => tool?.name === shellTool)

/** what the Responses fake answers: the final text once the last input item is a tool's output, else the shell call */
const responsesAnswer = (request: WireRequest) => {
  const input: Array<Json> = Array.isArray(request.body?.input) ? request.body.input : []
  const last = input[input.length - 1]
  if (last?.type !== "function_call_output" && offersShell(request.body?.tools)) {
    return answer(request, responseObject([functionCallItem(callId, shellTool, JSON.stringify({ cmd: command }))]))
  }
  return answer(request, responseObject([messageItem(finalText)]))
}

/** the same for the Chat Completions fake: a `tool` message last means the tool ran */
const chatAnswer = (request: ReceivedRequest) => {
  const messages: Array<Json> = Array.isArray(request.body?.messages) ? request.body.messages : []
  const last = messages[messages.length - 1]
  const tools = (request.body?.tools ?? []).map((tool: Json) => tool.function)
  const call = last?.role !== "tool" && offersShell(tools)
  const stream = request.body?.stream === true
  if (call) {
    const calls = [{ id: callId, function: { name: shellTool, arguments: JSON.stringify({ cmd: command }) } }]
    return stream
      ? { kind: "stream" as const, chunks: toolCallStreamChunks(calls) }
      : { kind: "json" as const, body: completion({ content: null, tool_calls: calls.map((c) => ({ ...c, type: "function" })) }, { finishReason: "tool_calls" }) }
  }
  return stream ? { kind: "stream" as const, chunks: textStreamChunks([finalText.slice(0, 6), finalText.slice(6)]) } : { kind: "json" as const, body: completion({ content: finalText }) }
}

const codexKeyVariable = "GATEWAY_TEST_CODEX_KEY"

/**
 * `$CODEX_HOME/config.toml`: the gateway as a Responses provider, no retries (a refusal shows at
 * once), no update check, no analytics or feedback; Codex's own tools as it offers them by
 * default (its built-in `web_search` and `namespace` tools go to a Responses API provider and
 * are dropped for a Chat Completions one). The settings of docs/openai-responses.md#codex-cli.
 */
const codexConfig = (gatewayUrl: string, model: string) => `
model = "${model}"
model_provider = "gateway"
approval_policy = "never"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.gateway]
name = "LLM gateway"
base_url = "${gatewayUrl}/openai/v1"
wire_api = "responses"
env_key = "${codexKeyVariable}"
request_max_retries = 0
stream_max_retries = 0
`

interface CodexRun extends RunResult {
  /** the `--json` events of stdout */
  readonly events: Array<Json>
  /** the `--output-last-message` file */
  readonly lastMessage: string | undefined
  readonly workdir: string
}

/** a port nothing listens on: the proxy every request leaving 127.0.0.1 would have to go through */
const closedPort = "http://127.0.0.1:9"

const runCodex = async (codex: string, gatewayUrl: string, model: string): Promise<CodexRun> => {
  const home = writeFiles({ "config.toml": codexConfig(gatewayUrl, model) })
  const workdir = writeFiles({ "README.md": "A scratch folder for the Codex CLI test.\n" })
  const lastFile = path.join(home, "last-message.txt")
  // `--sandbox workspace-write` with `approval_policy = "never"` (what `--full-auto` was): the
  // command runs in Codex's own sandbox without a prompt (it works as root in the CI container);
  // `--ephemeral` keeps no session files; `--strict-config` fails on a key this version ignores
  const args = [
    "exec",
    "--json",
    "--strict-config",
    "--skip-git-repo-check",
    "--ephemeral",
    "--sandbox",
    "workspace-write",
    "--color",
    "never",
    "-C",
    workdir,
    "-o",
    lastFile,
    `Write the text ${proofText} to proof.txt in the current folder with a shell command.`
  ]
  const run = await runCommand(codex, args, {
    what: "codex exec",
    cwd: workdir,
    stdin: "ignore",
    timeoutMs: 90_000,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      CODEX_HOME: home,
      [codexKeyVariable]: "sk-codex-test",
      HTTPS_PROXY: closedPort,
      HTTP_PROXY: closedPort,
      ALL_PROXY: closedPort,
      https_proxy: closedPort,
      http_proxy: closedPort,
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
      RUST_LOG: "error"
    }
  })
  const events = run.stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
  const lastMessage = fs.existsSync(lastFile) ? fs.readFileSync(lastFile, "utf8") : undefined
  return { ...run, events, lastMessage, workdir }
}

/** the events of a run as a failing assertion shows them */
const transcript = (run: CodexRun) => `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`

/** the `item.completed` items of a run, by type */
const completedItems = (run: CodexRun, type: string): Array<Json> =>
  run.events.filter((event) => event.type === "item.completed" && event.item?.type === type).map((event) => event.item)

const expectTaskDone = (run: CodexRun) => {
  expect(run.code, transcript(run)).toBe(0)
  expect(run.lastMessage?.trim()).toBe(finalText)
  expect(completedItems(run, "agent_message").map((item) => item.text)).toContain(finalText)
  const commands = completedItems(run, "command_execution")
  expect(commands.map((item) => item.command).join("\n"), transcript(run)).toContain(`proof.txt`)
  expect(commands.some((item) => item.exit_code === 0 && String(item.aggregated_output).includes(proofText)), transcript(run)).toBe(true)
  expect(fs.readFileSync(path.join(run.workdir, "proof.txt"), "utf8")).toBe(proofText)
  expect(run.events.some((event) => event.type === "turn.failed" || event.type === "error"), transcript(run)).toBe(false)
}

describe("the Codex CLI (codex exec) through POST /openai/v1/responses", () => {
  let codex: string
  let responses: WireServer
  let chat: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    codex = execFileSync("bash", [path.join(repoRoot, "scripts/installCodex.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 240_000 })
      .trim().split("\n").pop()!
    responses = await startFakeOpenAiResponses({ answerWith: responsesAnswer })
    chat = await startFakeOpenAi()
    chat.fallback = chatAnswer
    gateway = await startGateway({
      config: `
[models.codex-responses]
routing = ["responses"]
[models.codex-responses.providers.responses]
type = "openai"
api_type = "responses"
model_name = "gpt-5-codex"
api_base = "${responses.url}/v1/"
api_key_location = "env::TEST_RESPONSES_KEY"

[models.codex-chat]
routing = ["chat"]
${openAiProviderToml("codex-chat", "chat", "gpt-4o", chat.apiBase, "none")}
`,
      env: { TEST_RESPONSES_KEY: responsesFakeKey }
    })
  }, 300_000)
  afterAll(async () => {
    await gateway?.stop()
    await responses?.close()
    await chat?.close()
  })

  it("runs its shell tool and answers, the model served by an OpenAI Responses provider", async () => {
    const run = await runCodex(codex, gateway.url, "codex-responses")
    expectTaskDone(run)
    const turns = responses.requests.filter((request) => offersShell(request.body?.tools))
    expect(turns.length, transcript(run)).toBeGreaterThanOrEqual(2)
    // Codex streams: the gateway's streamed Responses events are what it read
    expect(turns.every((request) => request.body.stream === true)).toBe(true)
    // the tool's output came back for the call the fake made, through the gateway
    const outputs = turns.flatMap((request) => request.body.input).filter((item: Json) => item?.type === "function_call_output")
    expect(outputs.map((item: Json) => item.call_id)).toContain(callId)
    expect(JSON.stringify(outputs.find((item: Json) => item.call_id === callId).output)).toContain(proofText)
    const calls = turns.flatMap((request) => request.body.input).filter((item: Json) => item?.type === "function_call")
    expect(calls.map((item: Json) => [item.call_id, item.name])).toContainEqual([callId, shellTool])
  }, 120_000)

  it("runs its shell tool and answers, the model served by an OpenAI Chat Completions provider", async () => {
    const run = await runCodex(codex, gateway.url, "codex-chat")
    expectTaskDone(run)
    const turns = chat.requests.filter((request) => offersShell((request.body?.tools ?? []).map((tool: Json) => tool.function)))
    expect(turns.length, transcript(run)).toBeGreaterThanOrEqual(2)
    const messages: Array<Json> = turns.flatMap((request) => request.body.messages)
    const toolMessage = messages.find((message) => message.role === "tool" && message.tool_call_id === callId)
    expect(toolMessage, transcript(run)).toBeDefined()
    expect(JSON.stringify(toolMessage!.content)).toContain(proofText)
    const asked = messages.filter((message) => message.role === "assistant").flatMap((message) => message.tool_calls ?? [])
    expect(asked.map((call: Json) => [call.id, call.function.name])).toContainEqual([callId, shellTool])
  }, 120_000)
})
