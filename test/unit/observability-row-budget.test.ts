/**
 * Rows cut down to `max_row_bytes` (src/analytics/rowBudget.ts), through each backend's own
 * row encoding (layers/postgres/rows.ts, layers/clickhouse/rows.ts): what stays, what is cut,
 * in which order, and the markers and placeholders that say so.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { encode as encodeClickHouse } from "../../layers/clickhouse/rows.ts"
import { encode as encodePostgres } from "../../layers/postgres/rows.ts"
import { uuidv7 } from "../../src/ids.ts"
import type { EncodedRow } from "../../src/analytics/database.ts"
import { emptyBatch, type StoredInference, type StoredModelInference, type WriteBatch } from "../../src/analytics/records.ts"
import { cutMarkerPrefix, placeholderPrefix } from "../../src/analytics/rowBudget.ts"

const KiB = 1024
const now = Date.now()

const inference = (input: unknown, output: StoredInference["output"]): StoredInference => {
  const id = uuidv7(now)
  return {
    id,
    workspace: "default",
    functionName: "chat",
    functionType: "chat",
    variantName: "v",
    episodeId: uuidv7(now),
    input,
    output,
    inferenceParams: { chat_completion: {} },
    processingTimeMs: 1,
    tags: { user: "alice" },
    timestamp: now
  }
}

const modelCall = (fields: Partial<StoredModelInference>): StoredModelInference => ({
  id: uuidv7(now),
  workspace: "default",
  inferenceId: uuidv7(now),
  modelName: "m",
  modelProviderName: "p",
  rawRequest: "{}",
  rawResponse: "{}",
  inputMessages: [],
  output: [],
  inputTokens: 1,
  outputTokens: 1,
  responseTimeMs: 1,
  cached: false,
  timestamp: now,
  ...fields
})

const backends = [
  {
    name: "postgres",
    encode: encodePostgres,
    /** the row's fields as the store reads them back */
    read: (row: EncodedRow) => JSON.parse(row.text.toString("utf8"))
  },
  {
    name: "clickhouse",
    encode: encodeClickHouse,
    // ClickHouse rows hold JSON values as JSON text
    read: (row: EncodedRow) => {
      const parsed = JSON.parse(row.text.toString("utf8"))
      for (const key of ["input", "output", "input_messages"]) if (typeof parsed[key] === "string") parsed[key] = JSON.parse(parsed[key])
      return parsed
    }
  }
] as const

const rowsOf = (encode: (batch: WriteBatch, max: number) => Result.Result<ReadonlyArray<EncodedRow>, unknown>, batch: WriteBatch, max: number) => {
  const rows = encode(batch, max)
  if (Result.isFailure(rows)) throw new Error(String(rows.failure))
  return rows.success
}

const userText = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })

describe.each(backends)("rows over max_row_bytes, on $name", ({ encode, read }) => {
  it("leaves a row within the budget as it is", () => {
    const row = inference(userText("hello"), [{ type: "text", text: "hi" }])
    const [encoded] = rowsOf(encode, { ...emptyBatch, inferences: [row] }, 64 * KiB)
    expect(encoded.cut).toBeUndefined()
    expect(read(encoded).input).toEqual(userText("hello"))
  })

  it("cuts the longest texts to one level, keeping short ones and the structure, each cut marked", () => {
    const long = "a".repeat(300 * KiB)
    const row = inference({ messages: [{ role: "user", content: [{ type: "text", text: long }, { type: "text", text: "keep me" }] }] }, [
      { type: "text", text: "b".repeat(200 * KiB) }
    ])
    const [encoded] = rowsOf(encode, { ...emptyBatch, inferences: [row] }, 128 * KiB)
    expect(encoded.text.length).toBeLessThanOrEqual(128 * KiB)
    // its texts alone pass the budget: cut without being encoded whole, its size known as at least theirs
    expect(encoded.cut).toMatch(/_inference row \(id [0-9a-f-]+\) of at least \d+ bytes was cut to \d+, over max_row_bytes \(131072\): texts cut in input, output$/)
    const stored = read(encoded)
    const [first, second] = stored.input.messages[0].content
    expect(second).toEqual({ type: "text", text: "keep me" })
    expect(first.text).toMatch(new RegExp(`^a+\\${cutMarkerPrefix} \\d+ of ${300 * KiB} characters`))
    const output = stored.output[0].text as string
    expect(output).toMatch(new RegExp(`^b+\\${cutMarkerPrefix} \\d+ of ${200 * KiB} characters`))
    // one level: both kept about as much (the budget shared, not the first text starved)
    const keptInput = first.text.indexOf("[")
    const keptOutput = output.indexOf("[")
    expect(Math.abs(keptInput - keptOutput)).toBeLessThan(2 * KiB)
    expect(keptInput).toBeGreaterThan(40 * KiB)
    // what is left is used: the row is near the budget, not far under it
    expect(encoded.text.length).toBeGreaterThan(100 * KiB)
  })

  it("measures a row whose texts are within the budget but whose encoding is not (escapes), and cuts it", () => {
    // 100 KiB of quotes: 200 KiB and more once escaped
    const row = inference(userText('"'.repeat(100 * KiB)), [{ type: "text", text: "hi" }])
    const [encoded] = rowsOf(encode, { ...emptyBatch, inferences: [row] }, 128 * KiB)
    expect(encoded.text.length).toBeLessThanOrEqual(128 * KiB)
    const [, bytes] = /of (\d+) bytes was cut to \d+, over max_row_bytes \(131072\): texts cut in input$/.exec(encoded.cut ?? "") ?? []
    expect(Number(bytes)).toBeGreaterThan(200 * KiB)
    expect(read(encoded).input.messages[0].content[0].text).toMatch(new RegExp(`^"+\\${cutMarkerPrefix} \\d+ of ${100 * KiB} characters`))
  })

  it("cuts the raw payloads of a model call first, then its messages and output, and drops its cache key", () => {
    const small = modelCall({
      rawRequest: JSON.stringify({ messages: [{ content: "x".repeat(100 * KiB) }] }),
      rawResponse: JSON.stringify({ content: "y".repeat(100 * KiB) }),
      inputMessages: [{ role: "user", content: [{ type: "text", text: "short question" }] }],
      output: [{ type: "text", text: "short answer" }],
      cacheKey: "a".repeat(64)
    })
    const [raw] = rowsOf(encode, { ...emptyBatch, modelInferences: [small] }, 100 * KiB)
    expect(raw.text.length).toBeLessThanOrEqual(100 * KiB)
    expect(raw.cut).toMatch(/model_inference row .* texts cut in raw_request, raw_response; its answer is not cached$/)
    const stored = read(raw)
    expect(stored.input_messages).toEqual(small.inputMessages)
    expect(stored.output).toEqual(small.output)
    expect(stored.raw_request).toContain(cutMarkerPrefix)
    expect(stored.raw_response).toContain(cutMarkerPrefix)
    // no key (ClickHouse keeps an empty one)
    expect(stored.cache_key || null).toBeNull()

    const large = modelCall({
      rawRequest: "r".repeat(100 * KiB),
      rawResponse: "s".repeat(100 * KiB),
      inputMessages: [{ role: "user", content: [{ type: "text", text: "q".repeat(200 * KiB) }] }],
      output: [{ type: "text", text: "o".repeat(10 * KiB) }]
    })
    const [both] = rowsOf(encode, { ...emptyBatch, modelInferences: [large] }, 64 * KiB)
    expect(both.text.length).toBeLessThanOrEqual(64 * KiB)
    const cut = read(both)
    // the raw payloads are cut to their markers alone before the messages are touched
    expect(cut.raw_request).toBe(`${cutMarkerPrefix} ${100 * KiB} of ${100 * KiB} characters, the row being over [gateway.observability] max_row_bytes]`)
    expect(cut.raw_response.startsWith(cutMarkerPrefix)).toBe(true)
    expect(cut.input_messages[0].content[0].text).toMatch(/^q+\[gateway: truncated/)
    // the output, shorter than the level, is kept whole
    expect(cut.output).toEqual(large.output)
  })

  it("cuts texts of characters of several bytes without splitting a surrogate pair", () => {
    const row = inference(userText("😀".repeat(100 * KiB)), [{ type: "text", text: "日本語".repeat(40 * KiB) }])
    const [encoded] = rowsOf(encode, { ...emptyBatch, inferences: [row] }, 96 * KiB)
    expect(encoded.text.length).toBeLessThanOrEqual(96 * KiB)
    const text = read(encoded).input.messages[0].content[0].text as string
    expect(text).toMatch(/^(😀)+\[gateway: truncated/)
    expect(text.isWellFormed()).toBe(true)
  })

  it("puts a placeholder of the field's shape in place of a value whose structure alone is too large", () => {
    const row = inference({ messages: [{ role: "user", content: [{ type: "text", arguments: { values: Array.from({ length: 50_000 }, (_, i) => i) } }] }] }, [
      { type: "text", text: "fine" }
    ])
    const [encoded] = rowsOf(encode, { ...emptyBatch, inferences: [row] }, 64 * KiB)
    expect(encoded.text.length).toBeLessThanOrEqual(64 * KiB)
    expect(encoded.cut).toContain("replaced by placeholders in input")
    const stored = read(encoded)
    expect(stored.input.messages[0].content[0].text).toMatch(new RegExp(`^\\${placeholderPrefix}not stored: \\d+ bytes`))
    expect(stored.output).toEqual([{ type: "text", text: "fine" }])
  })
})
