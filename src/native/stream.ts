/** `/inference`'s streamed answer (spec 4.1): its Server-Sent Events. */
import type { VariantConfig } from "../config/types.ts"
import { jsonDelta } from "../inference/chunks.ts"
import type { PreparedInference } from "../inference/prepare.ts"
import { totalCost, totalUsage } from "../inference/run.ts"
import type { StreamEncoder } from "../inference/service.ts"
import { sseDone, sseEvent } from "../sseWriter.ts"
import { inferenceUsage } from "./response.ts"

/** `/inference`'s events: `{inference_id, episode_id, variant_name, content | raw}`, then usage and finish reason, then `[DONE]`. */
export const inferenceStreamEncoder = (prepared: PreparedInference, variant: VariantConfig): StreamEncoder => {
  const head = `"inference_id":"${prepared.inferenceId}","episode_id":"${prepared.episodeId}","variant_name":${JSON.stringify(variant.name)}`
  const isChat = prepared.fn.type === "chat"
  return {
    chunk: ({ content }) => {
      if (content.length === 0) return undefined
      if (isChat) return sseEvent(`{${head},"content":${JSON.stringify(content)}}`)
      const raw = jsonDelta(content)
      return raw === "" ? undefined : sseEvent(`{${head},"raw":${JSON.stringify(raw)}}`)
    },
    end: (completed) => {
      const final: Record<string, unknown> = { usage: inferenceUsage(totalUsage(completed), totalCost(completed)) }
      if (completed.finishReason !== undefined) final.finish_reason = completed.finishReason
      const fields = JSON.stringify(final).slice(1)
      return sseEvent(isChat ? `{${head},"content":[],${fields}` : `{${head},"raw":"",${fields}`) + sseDone
    },
    failure: ({ message }) => sseEvent(JSON.stringify({ error: message }))
  }
}
