/**
 * Between whole answers and streamed chunks: splitting output blocks into chunk deltas (for
 * the dummy provider and for replaying a cached answer as a stream), and putting streamed
 * deltas back together into output blocks (for storage); the text a json function streams.
 */
import type { ChunkDelta, FinishReason, OutputBlock, ProviderChunk, Usage } from "./types.ts"

const split = (text: string, size: number): ReadonlyArray<string> => {
  if (text.length <= size) return [text]
  const pieces: Array<string> = []
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size))
  return pieces
}

/** The deltas that stream `output`, text cut in pieces of `pieceSize` characters. */
export const outputToDeltas = (output: ReadonlyArray<OutputBlock>, pieceSize = Infinity): ReadonlyArray<ChunkDelta> => {
  const deltas: Array<ChunkDelta> = []
  output.forEach((block, index) => {
    const id = String(index)
    switch (block.type) {
      case "text":
        for (const text of split(block.text, pieceSize)) deltas.push({ type: "text", id, text })
        break
      case "thought":
        for (const text of split(block.text, pieceSize)) deltas.push({ type: "thought", id, text })
        break
      case "tool_call":
        split(block.raw_arguments, pieceSize).forEach((piece, i) =>
          deltas.push({ type: "tool_call", id: block.id, raw_name: i === 0 ? block.raw_name : "", raw_arguments: piece })
        )
        break
      case "unknown":
        break
    }
  })
  return deltas
}

/** A whole answer as a stream: one chunk per delta, then one with usage and the finish reason. */
export const outputToChunks = (
  output: ReadonlyArray<OutputBlock>,
  usage: Usage,
  finishReason: FinishReason | undefined,
  pieceSize?: number
): ReadonlyArray<ProviderChunk> => [
  ...outputToDeltas(output, pieceSize).map((delta) => ({ content: [delta], raw: JSON.stringify(delta) })),
  { content: [], usage, finishReason, raw: "" }
]

/** Collects streamed chunks into the blocks, usage, finish reason and raw text of the whole answer. */
export class ChunkAccumulator {
  // blocks under construction, mutable while deltas arrive
  private readonly blocks = new Map<
    string,
    { type: string; text?: string; signature?: string; id?: string; raw_name?: string; raw_arguments?: string }
  >()
  private readonly raw: Array<string> = []
  usage: Usage | undefined
  finishReason: FinishReason | undefined

  add(chunk: ProviderChunk): void {
    if (chunk.usage !== undefined) this.usage = chunk.usage
    if (chunk.finishReason !== undefined) this.finishReason = chunk.finishReason
    if (chunk.raw !== "") this.raw.push(chunk.raw)
    for (const delta of chunk.content) {
      const key = `${delta.type}:${delta.id}`
      const block = this.blocks.get(key)
      switch (delta.type) {
        case "text":
        case "thought":
          if (block === undefined) this.blocks.set(key, { type: delta.type, text: delta.text })
          else block.text = block.text! + delta.text
          // a thought's signature comes whole, in a delta of its own (Anthropic's signature_delta)
          if (delta.type === "thought" && delta.signature !== undefined) this.blocks.get(key)!.signature = delta.signature
          break
        case "tool_call":
          if (block === undefined) {
            this.blocks.set(key, { type: "tool_call", id: delta.id, raw_name: delta.raw_name, raw_arguments: delta.raw_arguments })
          } else {
            block.raw_name = block.raw_name! + delta.raw_name
            block.raw_arguments = block.raw_arguments! + delta.raw_arguments
          }
          break
      }
    }
  }

  output(): ReadonlyArray<OutputBlock> {
    return [...this.blocks.values()] as unknown as ReadonlyArray<OutputBlock>
  }

  /** the provider's chunks as received (those with text), for pricing */
  rawChunks(): ReadonlyArray<string> {
    return this.raw
  }

  /** the provider's chunks, one per line, as the raw response */
  rawResponse(): string {
    return this.raw.join("\n")
  }
}

/** The text a json function streams: its text deltas, or its tool call's argument deltas (json_mode `tool`). */
export const jsonDelta = (content: ReadonlyArray<ChunkDelta>): string => {
  let raw = ""
  for (const delta of content) {
    if (delta.type === "text") raw += delta.text
    else if (delta.type === "tool_call") raw += delta.raw_arguments
  }
  return raw
}
