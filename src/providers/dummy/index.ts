/**
 * `dummy`: a built-in deterministic provider for tests, demos and benchmarks. It needs no
 * network and no key; its `model_name` picks a behaviour (see the table in docs/providers.md, The dummy provider).
 *
 * A client, not a codec: it has no wire format, so nothing of the runner applies to it (no body
 * for `extra_body` to edit, no tools to send, no transport, framing or error body). Making it
 * build and parse a body of its own would only add work to every benchmark run. Credentials,
 * timeouts and fallback reach it like any provider, through the model call.
 */
import * as Effect from "effect/Effect"
import { pullOf } from "../../streams.ts"
import { outputToChunks } from "../../inference/chunks.ts"
import type { ModelRequest, OutputBlock, ProviderResponse, Usage } from "../../inference/types.ts"
import { type BatchClient, type ProviderCall, type ProviderClient, type ProviderDefinition, type ProviderStream } from "../types.ts"
import { ProviderFailure } from "../failure.ts"

export const dummyText = "Hello from the dummy provider. This answer is always the same."
export const dummyJson = "{\"answer\":\"Hello\"}"
export const dummyThought = "The caller wants a greeting, so I will greet them."
export const dummyToolArguments = "{\"location\":\"Brooklyn\",\"units\":\"celsius\"}"
export const dummyBadToolArguments = "{\"location\":12345}"
export const dummyInvalidToolArguments = "{\"location\": Brooklyn"
export const dummyUsage: Usage = { input_tokens: 10, output_tokens: 10 }
export const dummyGoodKey = "good_key"
export const dummySlowDelayMs = 500

const defaultToolName = "get_temperature"

/** the tool a dummy tool call goes to: the forced one, else the first offered, else `get_temperature` */
const toolName = (request: ModelRequest): string => {
  if (request.jsonMode === "tool" && request.functionType === "json") return "respond"
  const tools = request.tools
  if (tools === undefined) return defaultToolName
  if (tools.choice.type === "specific") return tools.choice.name
  const offered = tools.allowed ?? tools.tools.map((tool) => tool.name)
  return offered[0] ?? defaultToolName
}

const toolCall = (request: ModelRequest, rawArguments: string): OutputBlock => ({
  type: "tool_call",
  id: "0",
  raw_name: toolName(request),
  raw_arguments: rawArguments
})

/** the answer of a model that succeeds, by model name */
const answer = (modelName: string, request: ModelRequest): ReadonlyArray<OutputBlock> => {
  switch (modelName) {
    case "json":
      return request.jsonMode === "tool" && request.functionType === "json"
        ? [toolCall(request, dummyJson)]
        : [{ type: "text", text: dummyJson }]
    case "tool":
      return [toolCall(request, dummyToolArguments)]
    case "bad_tool":
      return [toolCall(request, dummyBadToolArguments)]
    case "invalid_tool_arguments":
      return [toolCall(request, dummyInvalidToolArguments)]
    case "reasoner":
      return [{ type: "thought", text: dummyThought }, { type: "text", text: dummyText }]
    case "echo":
      return [{ type: "text", text: JSON.stringify({ system: request.system ?? null, messages: request.messages }) }]
    default:
      return [{ type: "text", text: dummyText }]
  }
}

const finishReasonOf = (output: ReadonlyArray<OutputBlock>) =>
  output.some((block) => block.type === "tool_call") ? "tool_call" as const : "stop" as const

/** the request as the dummy "receives" it, kept as the raw request */
const rawRequestOf = (modelName: string, call: ProviderCall): string =>
  JSON.stringify({
    model: modelName,
    system: call.request.system,
    messages: call.request.messages,
    params: call.request.params,
    tools: call.request.tools?.tools.map((tool) => tool.name),
    json_mode: call.request.jsonMode
  })

export const makeDummyClient = (modelName: string): ProviderClient => {
  let calls = 0

  // fails or waits as the model name says; succeeds with nothing otherwise
  const preamble = (call: ProviderCall): Effect.Effect<void, ProviderFailure> => {
    calls++
    switch (modelName) {
      case "error":
        return Effect.fail(new ProviderFailure({ message: "the dummy model `error` always fails", timedOut: false }))
      case "flaky":
        return calls % 2 === 1
          ? Effect.fail(new ProviderFailure({ message: `the dummy model \`flaky\` failed call ${calls}`, timedOut: false }))
          : Effect.void
      case "test_key":
        return call.apiKey === dummyGoodKey
          ? Effect.void
          : Effect.fail(new ProviderFailure({ message: "the dummy model `test_key` got an invalid API key", timedOut: false }))
      case "slow":
        return Effect.sleep(dummySlowDelayMs)
      default:
        return Effect.void
    }
  }

  const infer = (call: ProviderCall): Effect.Effect<ProviderResponse, ProviderFailure> =>
    Effect.map(preamble(call), () => {
      const output = answer(modelName, call.request)
      return {
        output,
        usage: dummyUsage,
        finishReason: finishReasonOf(output),
        rawRequest: rawRequestOf(modelName, call),
        rawResponse: JSON.stringify({ output, usage: dummyUsage })
      }
    })

  const stream = (call: ProviderCall): Effect.Effect<ProviderStream, ProviderFailure> =>
    Effect.map(preamble(call), () => {
      const rawRequest = rawRequestOf(modelName, call)
      const output = answer(modelName, call.request)
      // text streams in pieces of a few characters so that clients see several chunks
      const chunks = outputToChunks(output, dummyUsage, finishReasonOf(output), 12)
      if (modelName === "stream_error") {
        const failure = new ProviderFailure({ message: "the dummy model `stream_error` failed mid-stream", timedOut: false })
        return { rawRequest, next: pullOf([chunks.slice(0, 2)], failure), close: Effect.void }
      }
      return { rawRequest, next: pullOf([chunks]), close: Effect.void }
    })

  /**
   * Batch mode: a batch "runs" at once; its answers are the model's usual ones, kept in the
   * handle (so that any gateway process can poll it), read back by the first poll.
   */
  const batch: BatchClient = {
    start: (calls) =>
      Effect.suspend(() => {
        if (calls.length === 0) return Effect.fail(new ProviderFailure({ message: "a batch needs at least one request", timedOut: false }))
        return Effect.as(preamble(calls[0].call), {
          handle: {
            providerBatchId: `dummy_batch_${calls[0].id}`,
            data: { answers: calls.map(({ call, id }) => ({ id, output: answer(modelName, call.request) })) }
          },
          rawRequests: calls.map(({ call }) => rawRequestOf(modelName, call))
        })
      }),
    poll: (handle) =>
      Effect.sync(() => {
        const { answers } = handle.data as { answers: ReadonlyArray<{ id: string; output: ReadonlyArray<OutputBlock> }> }
        return {
          status: "completed" as const,
          results: answers.map(({ id, output }) => ({
            id,
            ok: true as const,
            response: {
              output,
              usage: dummyUsage,
              finishReason: finishReasonOf(output),
              rawRequest: "",
              rawResponse: JSON.stringify({ output, usage: dummyUsage })
            }
          }))
        }
      })
  }

  return { infer, stream, batch }
}

export const dummyProvider: ProviderDefinition = {
  type: "dummy",
  defaultCredential: { kind: "none" },
  requiresModelName: true,
  settingsFields: {},
  batch: true,
  make: (config) => makeDummyClient(config.modelName)
}
