/**
 * `unknown` output blocks name the provider that made them (`model_provider_name`), so that
 * they go back only to it. A codec reads an answer without knowing the call, so its unknown
 * blocks are scoped here, where the call is known.
 */
import * as Effect from "effect/Effect"
import type { OutputBlock } from "../../inference/types.ts"
import type { ProviderDefinition } from "../types.ts"
import { unscopedProvider } from "./response.ts"

const scoped = (output: ReadonlyArray<OutputBlock>, qualifiedName: string): ReadonlyArray<OutputBlock> =>
  output.some((block) => block.type === "unknown" && block.model_provider_name === unscopedProvider)
    ? output.map((block) =>
      block.type === "unknown" && block.model_provider_name === unscopedProvider ? { ...block, model_provider_name: qualifiedName } : block
    )
    : output

export const scopingUnknownBlocks = (definition: ProviderDefinition): ProviderDefinition => ({
  ...definition,
  make: (config) => {
    const client = definition.make(config)
    return {
      infer: (call) => Effect.map(client.infer(call), (response) => ({ ...response, output: scoped(response.output, call.qualifiedName) })),
      stream: client.stream
    }
  }
})
