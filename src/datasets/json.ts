/** A stored datapoint version as the API answers it (src/api/datasets.ts `ChatDatapoint`, `JsonDatapoint`). */
import { uuidv7Timestamp } from "../ids.ts"
import type { StoredDatapoint } from "./store.ts"

const iso = (epochMs: number) => new Date(epochMs).toISOString()

export const datapointJson = (datapoint: StoredDatapoint) => ({
  id: datapoint.id,
  type: datapoint.functionType,
  dataset_name: datapoint.datasetName,
  function_name: datapoint.functionName,
  input: datapoint.input,
  output: datapoint.output ?? null,
  episode_id: datapoint.episodeId ?? null,
  tags: datapoint.tags,
  name: datapoint.name ?? null,
  ...(datapoint.functionType === "chat"
    ? {
      allowed_tools: datapoint.toolParams?.allowed_tools ?? null,
      tool_choice: datapoint.toolParams?.tool_choice ?? null,
      parallel_tool_calls: datapoint.toolParams?.parallel_tool_calls ?? null,
      additional_tools: datapoint.toolParams?.additional_tools ?? null
    }
    : { output_schema: datapoint.outputSchema ?? null }),
  source_inference_id: datapoint.sourceInferenceId ?? null,
  is_custom: datapoint.isCustom,
  staled_at: datapoint.staledAt === undefined ? null : iso(datapoint.staledAt),
  updated_at: iso(datapoint.updatedAt),
  created_at: iso(uuidv7Timestamp(datapoint.id))
})
