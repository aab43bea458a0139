/**
 * Between whole answers and streamed chunks: splitting output blocks into chunk deltas (for
 * the dummy provider and for replaying a cached answer as a stream), putting streamed deltas
 * back together into output blocks (for storage) with the stream's chunking (so that a cached
 * stream replays as it came), and the text a json function streams.
 */
import type { ChunkDelta, FinishReason, OutputBlock, ProviderChunk, ProviderStop, Usage } from "./types.ts"

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

/**
 * How a stream was cut, to replay its answer the same way: for each chunk that had content, its
 * deltas as `[block, length]` (text; a thought's text, with a third element 1 when the delta
 * carried its signature) or `[block, name length, arguments length]` (a tool call), `block`
 * the index of the delta's block among the answer's blocks, lengths in UTF-16 code units.
 */
type StreamChunking = Array<Array<Array<number>>>

/** Collects streamed chunks into the blocks, usage, finish reason and raw text of the whole answer. */
export class ChunkAccumulator {
  // blocks under construction, mutable while deltas arrive
  private readonly blocks = new Map<
    string,
    { type: string; text?: string; signature?: string; id?: string; raw_name?: string; raw_arguments?: string }
  >()
  private readonly raw: Array<string> = []
  // the stream's chunking, kept only when asked (`recordChunking`): its blocks' indexes by key, and its chunks
  private readonly indexes: Map<string, number> | undefined
  private readonly chunks: StreamChunking | undefined
  usage: Usage | undefined
  finishReason: FinishReason | undefined
  providerStop: ProviderStop | undefined

  /** `recordChunking`: keep how the stream was cut (`chunking()`), for an answer the cache will replay */
  constructor(recordChunking = false) {
    this.indexes = recordChunking ? new Map() : undefined
    this.chunks = recordChunking ? [] : undefined
  }

  add(chunk: ProviderChunk): void {
    if (chunk.usage !== undefined) this.usage = chunk.usage
    if (chunk.finishReason !== undefined) this.finishReason = chunk.finishReason
    if (chunk.providerStop !== undefined) this.providerStop = chunk.providerStop
    if (chunk.raw !== "") this.raw.push(chunk.raw)
    const cuts = this.chunks !== undefined && chunk.content.length > 0 ? [] as Array<Array<number>> : undefined
    if (cuts !== undefined) this.chunks!.push(cuts)
    for (const delta of chunk.content) {
      const key = `${delta.type}:${delta.id}`
      if (cuts !== undefined) this.cut(cuts, key, delta)
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

  private cut(cuts: Array<Array<number>>, key: string, delta: ChunkDelta): void {
    const indexes = this.indexes!
    let index = indexes.get(key)
    if (index === undefined) {
      index = indexes.size
      indexes.set(key, index)
    }
    switch (delta.type) {
      case "text":
        cuts.push([index, delta.text.length])
        break
      case "thought":
        cuts.push(delta.signature === undefined ? [index, delta.text.length] : [index, delta.text.length, 1])
        break
      case "tool_call":
        cuts.push([index, delta.raw_name.length, delta.raw_arguments.length])
        break
    }
  }

  output(): ReadonlyArray<OutputBlock> {
    return [...this.blocks.values()] as unknown as ReadonlyArray<OutputBlock>
  }

  /** how the stream was cut (`StreamChunking` as JSON), when recorded */
  chunking(): string | undefined {
    return this.chunks === undefined ? undefined : JSON.stringify(this.chunks)
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

/**
 * `output` as the chunks of the stream that brought it, cut as `chunking` says
 * (`ChunkAccumulator.chunking`), then one with usage and the finish reason; undefined when the
 * chunking does not fit the output (it is not the stream's: a row cut down, a later version).
 */
const chunksAsStreamed = (
  output: ReadonlyArray<OutputBlock>,
  chunking: string,
  usage: Usage,
  finishReason: FinishReason | undefined
): ReadonlyArray<ProviderChunk> | undefined => {
  let cuts: unknown
  try {
    cuts = JSON.parse(chunking)
  } catch {
    return undefined
  }
  if (!Array.isArray(cuts)) return undefined
  // how much of each block (its text, or a tool call's name and arguments) the chunks so far took
  const taken = output.map(() => [0, 0])
  const piece = (text: string, at: number, length: unknown): string | undefined =>
    Number.isInteger(length) && (length as number) >= 0 && at + (length as number) <= text.length ? text.slice(at, at + (length as number)) : undefined
  const chunks: Array<ProviderChunk> = []
  for (const chunkCuts of cuts) {
    if (!Array.isArray(chunkCuts)) return undefined
    const content: Array<ChunkDelta> = []
    for (const cut of chunkCuts) {
      if (!Array.isArray(cut)) return undefined
      const [index, first, second] = cut
      const block = Number.isInteger(index) ? output[index] : undefined
      if (block === undefined) return undefined
      const at = taken[index]
      if (block.type === "text" || block.type === "thought") {
        const text = piece(block.text, at[0], first)
        if (text === undefined) return undefined
        at[0] += text.length
        content.push(block.type === "text"
          ? { type: "text", id: String(index), text }
          : second === 1 && block.signature !== undefined
          ? { type: "thought", id: String(index), text, signature: block.signature }
          : { type: "thought", id: String(index), text })
      } else if (block.type === "tool_call") {
        const name = piece(block.raw_name, at[0], first)
        const args = piece(block.raw_arguments, at[1], second)
        if (name === undefined || args === undefined) return undefined
        at[0] += name.length
        at[1] += args.length
        content.push({ type: "tool_call", id: block.id, raw_name: name, raw_arguments: args })
      } else return undefined
    }
    chunks.push({ content, raw: JSON.stringify(content) })
  }
  // every block whole again
  const whole = output.every((block, index) =>
    block.type === "text" || block.type === "thought"
      ? taken[index][0] === block.text.length
      : block.type === "tool_call"
      ? taken[index][0] === block.raw_name.length && taken[index][1] === block.raw_arguments.length
      : true
  )
  return whole ? [...chunks, { content: [], usage, finishReason, raw: "" }] : undefined
}

/**
 * A cached answer as a stream: cut as the stream that brought it was (`chunking`), or, for an
 * answer that came whole (or whose chunking does not fit), one chunk per block.
 */
export const replayedChunks = (
  output: ReadonlyArray<OutputBlock>,
  chunking: string | undefined,
  usage: Usage,
  finishReason: FinishReason | undefined
): ReadonlyArray<ProviderChunk> =>
  (chunking === undefined ? undefined : chunksAsStreamed(output, chunking, usage, finishReason)) ??
    outputToChunks(output, usage, finishReason)

/** The text a json function streams: its text deltas, or its tool call's argument deltas (json_mode `tool`). */
export const jsonDelta = (content: ReadonlyArray<ChunkDelta>): string => {
  let raw = ""
  for (const delta of content) {
    if (delta.type === "text") raw += delta.text
    else if (delta.type === "tool_call") raw += delta.raw_arguments
  }
  return raw
}
