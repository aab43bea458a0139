import { describe, expect, it } from "vitest"
import { evaluateFlagOf } from "../../layers/commands/evaluateFlags.ts"
import { namingFlags } from "../../layers/commands/flagNames.ts"

describe("a use case's refusal said with the command line's flags", () => {
  it("replaces each field of the request by its flag, with the key or without the index that follows it", () => {
    expect(namingFlags("dataset_name or datapoint_ids: give exactly one of them", evaluateFlagOf))
      .toBe("--dataset-name or --datapoint-ids: give exactly one of them")
    expect(namingFlags(`evaluator_names[1]: unknown evaluator "x" of function "f"`, evaluateFlagOf))
      .toBe(`--evaluator-names: unknown evaluator "x" of function "f"`)
    expect(namingFlags("adaptive_stopping_precision.exact: must be a positive number, got -1", evaluateFlagOf))
      .toBe("--adaptive-stopping-precision exact: must be a positive number, got -1")
    expect(namingFlags(`dataset_name: "big" holds more than 10000 datapoints of function "f"; set max_datapoints`, evaluateFlagOf))
      .toBe(`--dataset-name: "big" holds more than 10000 datapoints of function "f"; set --max-datapoints`)
  })

  it("leaves quoted values, other words and unknown fields as they are", () => {
    expect(namingFlags(`dataset_name: "dataset_name \\" variant_name" is not a dataset name`, evaluateFlagOf))
      .toBe(`--dataset-name: "dataset_name \\" variant_name" is not a dataset name`)
    expect(namingFlags("inference_id: unknown, function_names and concurrency_x too", evaluateFlagOf))
      .toBe("inference_id: unknown, function_names and concurrency_x too")
  })
})
