/**
 * `dummy`: a built-in deterministic provider for tests, demos and benchmarks. It needs no
 * network and no key; its `model_name` picks a behaviour (see the table in docs/providers.md,
 * The dummy provider): TensorZero's dummy models answer as TensorZero's do
 * (`tensorZeroModels.ts`: its users' test suites assert those answers), the gateway's own keep
 * theirs (`ownModels.ts`).
 *
 * A client, not a codec: it has no wire format, so nothing of the runner applies to it (no body
 * for `extra_body` to edit, no tools to send, no transport, framing or error body). Making it
 * build and parse a body of its own would only add work to every benchmark run. Credentials,
 * timeouts and fallback reach it like any provider, through the model call.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { outputToChunks } from "../../inference/chunks.ts"
import type { FinishReason, OutputBlock, ProviderResponse, Usage } from "../../inference/types.ts"
import { pullOf } from "../../streams.ts"
import { ProviderFailure } from "../failure.ts"
import type { BatchClient, BatchResult, ProviderCall, ProviderClient, ProviderDefinition, ProviderStream } from "../types.ts"
import { dummyEmbeddingClient } from "./embeddings.ts"
import { dummyHelloPieceLength, dummyHelloUsage } from "./fixed.ts"
import { ownModelNames, ownOutput, ownPreamble } from "./ownModels.ts"
import { finishReasonOf, spacedPull, tensorZeroChunks, tensorZeroOutput, tensorZeroPreamble, usageOf } from "./tensorZeroModels.ts"

export * from "./fixed.ts"

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

const hasToolCall = (output: ReadonlyArray<OutputBlock>) => output.some((block) => block.type === "tool_call")

/** one answer of a batch as its handle keeps it */
interface StoredBatchAnswer {
  readonly id: string
  readonly output?: ReadonlyArray<OutputBlock>
  readonly usage?: Usage
  readonly finishReason?: FinishReason
  readonly failure?: string
}

interface WholeAnswer {
  readonly output: ReadonlyArray<OutputBlock>
  readonly usage: Usage
  readonly finishReason: FinishReason
}

export const makeDummyClient = (modelName: string): ProviderClient => {
  const own = ownModelNames.has(modelName)
  let calls = 0

  const preamble = (call: ProviderCall, streamed: boolean): Effect.Effect<void, ProviderFailure> =>
    Effect.suspend(() => {
      calls++
      return own ? ownPreamble(modelName, calls) : tensorZeroPreamble(modelName, call, calls, streamed)
    })

  /** the answer after the preamble: TensorZero's usage counts the output blocks */
  const answer = (call: ProviderCall): Effect.Effect<WholeAnswer, ProviderFailure> => {
    if (own) {
      const output = ownOutput(modelName, call)
      const whole: WholeAnswer = { output, usage: dummyHelloUsage, finishReason: hasToolCall(output) ? "tool_call" : "stop" }
      return Effect.succeed(whole)
    }
    return Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<WholeAnswer, ProviderFailure> => {
      const output = tensorZeroOutput(modelName, call, now)
      if (output instanceof ProviderFailure) return Effect.fail(output)
      // a json answer under json_mode tool is a tool call whatever the name says
      const finishReason = hasToolCall(output) ? "tool_call" : finishReasonOf(modelName)
      return Effect.succeed({ output, usage: usageOf(modelName, output.length), finishReason })
    })
  }

  const responseOf = (whole: WholeAnswer, rawRequest: string): ProviderResponse => ({
    output: whole.output,
    usage: whole.usage,
    finishReason: whole.finishReason,
    rawRequest,
    rawResponse: JSON.stringify({ output: whole.output, usage: whole.usage })
  })

  const infer = (call: ProviderCall): Effect.Effect<ProviderResponse, ProviderFailure> =>
    preamble(call, false).pipe(
      Effect.andThen(answer(call)),
      Effect.map((whole) => responseOf(whole, rawRequestOf(modelName, call)))
    )

  const ownStream = (call: ProviderCall, rawRequest: string): ProviderStream => {
    const output = ownOutput(modelName, call)
    const chunks = outputToChunks(output, dummyHelloUsage, hasToolCall(output) ? "tool_call" : "stop", dummyHelloPieceLength)
    if (modelName === "stream_error") {
      const failure = new ProviderFailure({ message: "the dummy model `stream_error` failed mid-stream", timedOut: false })
      return { rawRequest, next: pullOf([chunks.slice(0, 2)], failure), close: Effect.void }
    }
    return { rawRequest, next: pullOf([chunks]), close: Effect.void }
  }

  const stream = (call: ProviderCall): Effect.Effect<ProviderStream, ProviderFailure> =>
    Effect.map(preamble(call, true), () => {
      const rawRequest = rawRequestOf(modelName, call)
      if (own) return ownStream(call, rawRequest)
      return { rawRequest, next: spacedPull(modelName, tensorZeroChunks(modelName)), close: Effect.void }
    })

  /**
   * Batch mode: a batch "runs" at once; its answers are the model's whole ones (or why one has
   * none), kept in the handle (so that any gateway process can poll it), read back by the first poll.
   */
  const batch: BatchClient = {
    start: (batchCalls) =>
      Effect.gen(function*() {
        if (batchCalls.length === 0) return yield* Effect.fail(new ProviderFailure({ message: "a batch needs at least one request", timedOut: false }))
        yield* preamble(batchCalls[0].call, false)
        const answers: Array<StoredBatchAnswer> = []
        for (const { call, id } of batchCalls) {
          const whole = yield* Effect.result(answer(call))
          answers.push(Result.isSuccess(whole) ? { id, ...whole.success } : { id, failure: whole.failure.message })
        }
        return {
          handle: { providerBatchId: `dummy_batch_${batchCalls[0].id}`, data: { answers } },
          rawRequests: batchCalls.map(({ call }) => rawRequestOf(modelName, call))
        }
      }),
    poll: (handle) =>
      Effect.sync(() => {
        const { answers } = handle.data as { answers: ReadonlyArray<StoredBatchAnswer> }
        return {
          status: "completed" as const,
          results: answers.map((stored): BatchResult =>
            stored.failure !== undefined
              ? { id: stored.id, ok: false, message: stored.failure }
              : {
                id: stored.id,
                ok: true,
                // a batch stored before answers carried their usage had the former fixed usage
                response: responseOf({
                  output: stored.output ?? [],
                  usage: stored.usage ?? dummyHelloUsage,
                  finishReason: stored.finishReason ?? (hasToolCall(stored.output ?? []) ? "tool_call" : "stop")
                }, "")
              }
          )
        }
      })
  }

  return { infer, stream, batch, embeddings: dummyEmbeddingClient(modelName) }
}

export const dummyProvider: ProviderDefinition = {
  type: "dummy",
  defaultCredential: { kind: "none" },
  requiresModelName: true,
  settingsFields: {},
  embeddings: true,
  batch: true,
  make: (config) => makeDummyClient(config.modelName)
}
