/**
 * The playground's runs: one streamed `POST /inference` per target (a variant pinned, or a model),
 * all at once, each chunk folded into its run's output as it arrives.
 */
import { useCallback, useEffect, useRef, useState } from "react"
import type { InferenceChunk, InferenceRequest, Usage } from "../../../../src/api/inference.ts"
import { ApiError, events } from "../../api.ts"

/** what one run calls: a variant of the function, or a model */
export type Target = { readonly kind: "variant"; readonly name: string } | { readonly kind: "model"; readonly name: string }

export const targetKey = (target: Target) => `${target.kind}:${target.name}`

/** one block of output: text, a thought, or a tool call (its name and arguments as they stream) */
export interface OutputBlock {
  readonly id: string
  readonly type: "text" | "thought" | "tool_call" | "json"
  readonly text: string
  readonly name?: string
}

export interface Run {
  readonly target: Target
  readonly status: "running" | "done" | "error" | "stopped"
  readonly blocks: ReadonlyArray<OutputBlock>
  readonly error?: string
  readonly inferenceId?: string
  readonly variantName?: string
  readonly usage?: typeof Usage.Type
  readonly finishReason?: string
  /** milliseconds from the request to the first chunk, and to the end */
  readonly firstChunkMs?: number
  readonly totalMs?: number
}

/** the run with one more chunk folded in */
export const foldChunk = (run: Run, chunk: InferenceChunk, elapsedMs: number): Run => {
  if ("error" in chunk) return { ...run, status: "error", error: chunk.error }
  const blocks = [...run.blocks]
  const append = (id: string, type: OutputBlock["type"], text: string, name?: string) => {
    const at = blocks.findIndex((block) => block.id === id && block.type === type)
    if (at < 0) blocks.push({ id, type, text, ...(name !== undefined && name !== "" && { name }) })
    else blocks[at] = { ...blocks[at], text: blocks[at].text + text, ...(name !== undefined && name !== "" && { name: (blocks[at].name ?? "") + name }) }
  }
  if ("raw" in chunk) append("json", "json", chunk.raw)
  else {
    for (const delta of chunk.content) {
      if (delta.type === "tool_call") append(delta.id, "tool_call", delta.raw_arguments, delta.raw_name)
      else append(delta.id, delta.type, delta.text)
    }
  }
  return {
    ...run,
    blocks,
    inferenceId: chunk.inference_id,
    variantName: chunk.variant_name,
    firstChunkMs: run.firstChunkMs ?? elapsedMs,
    ...(chunk.usage !== undefined && { usage: chunk.usage }),
    ...(chunk.finish_reason !== undefined && { finishReason: chunk.finish_reason })
  }
}

/** The runs of the last "Run", and how to start and stop them. */
export const useRuns = () => {
  const [runs, setRuns] = useState<ReadonlyArray<Run>>([])
  const controller = useRef<AbortController | undefined>(undefined)

  const update = (key: string, change: (run: Run) => Run) =>
    setRuns((current) => current.map((run) => targetKey(run.target) === key ? change(run) : run))

  const start = useCallback((targets: ReadonlyArray<Target>, request: (target: Target) => InferenceRequest) => {
    controller.current?.abort()
    const abort = new AbortController()
    controller.current = abort
    setRuns(targets.map((target) => ({ target, status: "running", blocks: [] })))
    for (const target of targets) {
      const key = targetKey(target)
      const started = performance.now()
      const elapsed = () => Math.round(performance.now() - started)
      void (async () => {
        try {
          for await (const chunk of events("/inference", request(target), abort.signal)) {
            update(key, (run) => foldChunk(run, chunk as InferenceChunk, elapsed()))
          }
          update(key, (run) => run.status === "running" ? { ...run, status: "done", totalMs: elapsed() } : { ...run, totalMs: elapsed() })
        } catch (error) {
          if (abort.signal.aborted) update(key, (run) => run.status === "running" ? { ...run, status: "stopped", totalMs: elapsed() } : run)
          else {
            const message = error instanceof ApiError ? `${error.status}: ${error.message}` : (error as Error).message
            update(key, (run) => ({ ...run, status: "error", error: message, totalMs: elapsed() }))
          }
        }
      })()
    }
  }, [])

  const stop = useCallback(() => controller.current?.abort(), [])
  // leaving the page ends its streams
  useEffect(() => () => controller.current?.abort(), [])
  const running = runs.some((run) => run.status === "running")
  return { runs, running, start, stop }
}
