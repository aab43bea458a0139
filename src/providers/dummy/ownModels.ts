/**
 * The gateway's own dummy models, whose names TensorZero's dummy does not use (or used for
 * something else: the gateway's former `tool`, `echo` and `slow` are `offered_tool`,
 * `echo_request_messages` (TensorZero's name for the same answer) and `delay_500ms`). They
 * answer `dummyHelloText` with usage 10 + 10 (`streamed_echo`: the request's messages as
 * `echo_request_messages` answers them, which TensorZero's streams as its fixed text), and
 * stream their whole answer in pieces of 12 characters, all at once.
 */
import * as Effect from "effect/Effect"
import type { ModelRequest, OutputBlock } from "../../inference/types.ts"
import { ProviderFailure } from "../failure.ts"
import type { ProviderCall } from "../types.ts"
import { dummyDelayMs, dummyHelloText, dummyToolArguments, dummyToolName } from "./fixed.ts"
import { requestMessagesText } from "./tensorZeroModels.ts"

export const ownModelNames: ReadonlySet<string> = new Set(["hello", "offered_tool", "streamed_echo", "flaky", "delay_500ms", "stream_error"])

const failure = (message: string) => new ProviderFailure({ message, timedOut: false })

/** what fails or waits before the answer: `flaky` fails its odd-numbered calls (this client's count), `delay_500ms` waits */
export const ownPreamble = (modelName: string, calls: number): Effect.Effect<void, ProviderFailure> => {
  switch (modelName) {
    case "flaky":
      return calls % 2 === 1 ? Effect.fail(failure(`the dummy model \`flaky\` failed call ${calls}`)) : Effect.void
    case "delay_500ms":
      return Effect.sleep(dummyDelayMs)
    default:
      return Effect.void
  }
}

/** the tool `offered_tool` calls: `respond` for a json function under json_mode tool, the forced one, the first offered or allowed, else `get_temperature` */
const offeredToolName = (request: ModelRequest): string => {
  if (request.jsonMode === "tool" && request.functionType === "json") return "respond"
  const tools = request.tools
  if (tools === undefined) return dummyToolName
  if (tools.choice.type === "specific") return tools.choice.name
  const offered = tools.allowed ?? tools.tools.map((tool) => tool.name)
  return offered[0] ?? dummyToolName
}

export const ownOutput = (modelName: string, call: ProviderCall): ReadonlyArray<OutputBlock> =>
  modelName === "offered_tool"
    ? [{ type: "tool_call", id: "0", raw_name: offeredToolName(call.request), raw_arguments: dummyToolArguments }]
    : [{ type: "text", text: modelName === "streamed_echo" ? requestMessagesText(call) : dummyHelloText }]
