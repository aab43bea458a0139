/**
 * Datapoints for the dataset store suite (test/integration/store-datasets.test.ts): versions to
 * write, complete by default (a field given as `undefined` is left out, as a store reads it
 * back), and what a store reads back of them.
 */
import type { NewDatapoint, StoredDatapoint } from "../../src/datasets/store.ts"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"

/** `record` without the fields whose value is undefined: optional fields are absent when read back */
const withoutUndefined = <A extends object>(record: A): A =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as A

export const chatDatapoint = (fields: Partial<NewDatapoint> = {}): NewDatapoint => {
  const id = fields.id ?? uuidv7(Date.now())
  return withoutUndefined({
    id,
    datasetName: "haikus",
    functionName: "write_haiku",
    functionType: "chat",
    input: { system: { name: "Ann" }, messages: [{ role: "user", content: [{ type: "text", text: "a haiku about rain" }] }] },
    output: [
      { type: "text", text: "Rain on the roof" },
      { type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Paris" }, raw_name: "get_weather", raw_arguments: "{\"city\":\"Paris\"}" }
    ],
    episodeId: uuidv7(Date.now()),
    tags: { user: "u1", env: "prod" },
    name: "first rain",
    toolParams: {
      allowed_tools: ["get_weather"],
      tool_choice: { specific: "get_weather" },
      parallel_tool_calls: false,
      additional_tools: [{ name: "get_time", description: "the time", parameters: { type: "object", properties: {} }, strict: true }]
    },
    sourceInferenceId: uuidv7(Date.now()),
    isCustom: false,
    updatedAt: uuidv7Timestamp(id),
    searchText: "ann\na haiku about rain\nrain on the roof",
    ...fields
  })
}

export const jsonDatapoint = (fields: Partial<NewDatapoint> = {}): NewDatapoint => {
  const id = fields.id ?? uuidv7(Date.now())
  return withoutUndefined({
    id,
    datasetName: "people",
    functionName: "extract",
    functionType: "json",
    input: { messages: [{ role: "user", content: "Ann is 30" }] },
    output: { name: "Ann", age: 30, nested: { ok: true, none: null, list: [1.5, -2, "x"] } },
    tags: {},
    outputSchema: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name"] },
    isCustom: true,
    updatedAt: uuidv7Timestamp(id),
    searchText: "ann is 30\nann\n30",
    ...fields
  })
}

/** what a store reads back of `datapoint` (its search text is not read back) */
export const stored = (datapoint: NewDatapoint): StoredDatapoint => {
  const { searchText: _, ...record } = datapoint
  return record
}

/** `datapoints` in id order, to compare answers given in any order */
export const byId = <A extends { readonly id: string }>(datapoints: ReadonlyArray<A>): Array<A> =>
  [...datapoints].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
