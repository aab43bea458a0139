/**
 * src/tensorzeroImport/clickhouseValues.ts: TensorZero's ClickHouse values as a current server
 * and the 18.16 of the tests give them, read into the neutral rows' values.
 */
import { describe, expect, it } from "vitest"
import { msOfUuidV7, paddedUInt128OfUuid, recordOf, toolParamsOf, uuidOfUInt128 } from "../../src/tensorzeroImport/clickhouseValues.ts"
import { booleanOf, numberOrNull, UnreadableValue } from "../../src/tensorzeroImport/columnValues.ts"

describe("TensorZero ClickHouse values", () => {
  it("turns a toUInt128(uuid) decimal back into the UUID, and a UUID into a decimal in the UUIDs' order", () => {
    const uuids = ["00000000-0000-0000-0000-000000000101", "0196368f-19bd-7000-8000-000000000001", "ffffffff-ffff-ffff-ffff-ffffffffffff"]
    expect(uuidOfUInt128("257", "id")).toBe(uuids[0])
    for (const uuid of uuids) expect(uuidOfUInt128(BigInt(paddedUInt128OfUuid(uuid)).toString(), "id")).toBe(uuid)
    const padded = uuids.map(paddedUInt128OfUuid)
    expect(padded.every((text) => text.length === 39)).toBe(true)
    expect([...padded].sort()).toEqual(padded)
    expect(() => uuidOfUInt128("12ab", "run_id_uint")).toThrow(UnreadableValue)
    expect(() => uuidOfUInt128((1n << 128n).toString(), "run_id_uint")).toThrow(UnreadableValue)
  })

  it("reads the time of a UUIDv7", () => {
    expect(msOfUuidV7("0196368f-19bd-7000-8000-000000000001")).toBe(1_744_672_070_077)
    expect(() => msOfUuidV7("not-a-uuid")).toThrow(UnreadableValue)
  })

  it("reads Bool and its UInt8 stand-in, and quoted 64-bit numbers", () => {
    expect([true, 1, "1", false, 0, "0"].map((value) => booleanOf(value, "cached"))).toEqual([true, true, true, false, false, false])
    expect(() => booleanOf(2, "cached")).toThrow(UnreadableValue)
    expect(numberOrNull("1744672070077", "at")).toBe(1_744_672_070_077)
    expect(numberOrNull(null, "ttft_ms")).toBeNull()
    expect(() => numberOrNull("fast", "ttft_ms")).toThrow(UnreadableValue)
  })

  it("pairs a map's keys and values, and refuses lists of different lengths", () => {
    expect(recordOf(["a", "b"], ["1", "2"], "tags")).toEqual({ a: "1", b: "2" })
    expect(recordOf(undefined, undefined, "tags")).toEqual({})
    expect(() => recordOf(["a"], [], "tags")).toThrow(UnreadableValue)
  })

  it("prefers the tool columns of migration 0041 when a row has any, the legacy tool_params otherwise", () => {
    const legacy = "{\"tools_available\":[],\"tool_choice\":\"none\",\"parallel_tool_calls\":null}"
    expect(toolParamsOf({ tool_params: legacy, dynamic_tools: [], dynamic_provider_tools: [], allowed_tools: null, tool_choice: null, parallel_tool_calls: null }))
      .toBe(legacy)
    expect(toolParamsOf({ tool_params: "" })).toBeNull()
    expect(toolParamsOf({
      tool_params: legacy,
      dynamic_tools: ["{\"name\":\"t\"}"],
      dynamic_provider_tools: [],
      allowed_tools: "[\"t\"]",
      tool_choice: "\"required\"",
      parallel_tool_calls: false
    })).toEqual({ tools_available: [{ name: "t" }], provider_tools: [], allowed_tools: ["t"], tool_choice: "required", parallel_tool_calls: false })
  })
})
