/**
 * What the Anthropic surface's suites (anthropic-messages-*.test.ts) share: a configuration with
 * a configured model onto a fake Anthropic server by the name Anthropic's clients send
 * (`claude-sonnet-4-5`) and a function `assistant` answering with `dummy::hello`, with other
 * variants (weight 0: reached by pinning them) on the dummy models given; the fake, a gateway
 * on that configuration and the official SDK's client of it, started together.
 */
import Anthropic from "@anthropic-ai/sdk"
import { anthropicModelToml, type FakeAnthropic, startFakeAnthropic } from "./fakeAnthropic.ts"
import { type RunningGateway, startGateway } from "./gateway.ts"

export const anthropicSurfaceConfig = (anthropic: Pick<FakeAnthropic, "apiBase">, variants: Readonly<Record<string, string>>) => `
${anthropicModelToml("claude-sonnet-4-5", "claude-sonnet-4-5", anthropic.apiBase, "env::TEST_ANTHROPIC_KEY")}
[functions.assistant]
type = "chat"
[functions.assistant.variants.main]
type = "chat_completion"
model = "dummy::hello"
weight = 1
${
  Object.entries(variants).map(([name, model]) => `[functions.assistant.variants.${name}]
type = "chat_completion"
model = "${model}"
weight = 0
`).join("")
}`

export const weatherTool = {
  name: "get_weather",
  description: "The weather of a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
}

/** the messages of a tool-use loop's second turn: the question, the answer that used a tool, the tool's result */
export const toolResultTurn = (
  question: string,
  answer: Anthropic.MessageParam["content"],
  toolUseId: string,
  result: string
): Array<Anthropic.MessageParam> => [
  { role: "user", content: question },
  { role: "assistant", content: answer },
  { role: "user", content: [{ type: "tool_result", tool_use_id: toolUseId, content: result }] }
]

export interface AnthropicSurface {
  readonly anthropic: FakeAnthropic
  readonly gateway: RunningGateway
  /** without retries, so that each error is seen as the gateway answered it */
  readonly client: Anthropic
  /** stops the gateway, then the fake */
  readonly stop: () => Promise<void>
}

/** `env`: more of the gateway's environment (an analytics database, say) */
export const startAnthropicSurface = async (
  config: (anthropic: FakeAnthropic) => string,
  env: Readonly<Record<string, string>> = {}
): Promise<AnthropicSurface> => {
  const anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" })
  try {
    const gateway = await startGateway({ config: config(anthropic), env: { TEST_ANTHROPIC_KEY: "sk-ant-upstream", ...env } })
    const client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "unused-without-auth", maxRetries: 0 })
    const stop = async () => {
      await gateway.stop()
      await anthropic.close()
    }
    return { anthropic, gateway, client, stop }
  } catch (error) {
    await anthropic.close()
    throw error
  }
}
