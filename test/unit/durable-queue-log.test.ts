import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { Buffer } from "node:buffer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { EncodedRow } from "../../src/analytics/database.ts"
import { openQueueLog, takeOrphanLog } from "../../layers/durableQueue/log.ts"
import { readRecords, unitRecord, writtenRecord } from "../../layers/durableQueue/records.ts"

const row = (id: string, table = "ChatInference"): EncodedRow => ({ table, text: Buffer.from(JSON.stringify({ id, text: "héllo" })) })
const idsOf = (units: ReadonlyArray<{ readonly rows: ReadonlyArray<EncodedRow> }>) =>
  units.flatMap((unit) => unit.rows.map((stored) => (JSON.parse(stored.text.toString("utf8")) as { id: string }).id))

let folder: string
beforeEach(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "durable-queue-"))
})
afterEach(() => {
  fs.rmSync(folder, { recursive: true, force: true })
})

describe("durable queue records", () => {
  it("reads back units and the written mark, rows and tables intact", () => {
    const file = Buffer.concat([
      unitRecord(1, [row("a"), row("b", "ModelInference")]),
      unitRecord(2, [row("c", "BooleanMetricFeedback")]),
      writtenRecord(1)
    ])
    const contents = readRecords(file)
    expect(contents.units.map((unit) => unit.sequence)).toEqual([1, 2])
    expect(idsOf(contents.units)).toEqual(["a", "b", "c"])
    expect(contents.units[0].rows.map((stored) => stored.table)).toEqual(["ChatInference", "ModelInference"])
    expect(contents.writtenUpTo).toBe(1)
    expect(contents.ignoredBytes).toBe(0)
  })

  it("ignores a torn tail: a record cut anywhere is dropped, the whole ones before it kept", () => {
    const whole = Buffer.concat([unitRecord(1, [row("a")]), unitRecord(2, [row("b")])])
    const last = unitRecord(3, [row("c")])
    for (let cut = 1; cut < last.length; cut++) {
      const contents = readRecords(Buffer.concat([whole, last.subarray(0, cut)]))
      expect(idsOf(contents.units)).toEqual(["a", "b"])
      expect(contents.ignoredBytes).toBe(cut)
    }
  })

  it("stops at a damaged record: what follows it in the file is not trusted", () => {
    const first = unitRecord(1, [row("a")])
    const damaged = unitRecord(2, [row("b")])
    damaged[damaged.length - 3] ^= 0xff
    const contents = readRecords(Buffer.concat([first, damaged, unitRecord(3, [row("c")])]))
    expect(idsOf(contents.units)).toEqual(["a"])
    expect(contents.ignoredBytes).toBeGreaterThan(damaged.length)
  })
})

describe("durable queue log", () => {
  it("deletes its files when every unit appended was written, and keeps them for a replay when not", () => {
    const done = openQueueLog({ folder, fsync: "batch", maxBytes: 1 << 20, segmentBytes: 1 << 16, syncIntervalMs: 100 })
    expect(done.append([row("a")])).toBe(1)
    done.written(1)
    done.close()
    expect(fs.readdirSync(folder)).toEqual([])

    const left = openQueueLog({ folder, fsync: "always", maxBytes: 1 << 20, segmentBytes: 1 << 16, syncIntervalMs: 100 })
    left.append([row("a")])
    left.append([row("b")])
    left.written(1)
    left.close()
    const orphan = takeOrphanLog(folder, "another")
    expect(orphan?.owner).toBe(left.owner)
    expect(idsOf(orphan!.units)).toEqual(["b"])
    orphan!.remove()
    expect(fs.readdirSync(folder)).toEqual([])
  })

  it("refuses an append past its bound in bytes, and takes appends again once units are written", () => {
    const record = unitRecord(1, [row("a")]).length
    const log = openQueueLog({ folder, fsync: "never", maxBytes: record * 3 + 20, segmentBytes: record, syncIntervalMs: 100 })
    expect([log.append([row("a")]), log.append([row("b")]), log.append([row("c")]), log.append([row("d")])]).toEqual([1, 2, 3, "full"])
    // a segment holds one record here: the two oldest go once written
    log.written(2)
    expect(log.append([row("d")])).toBe(4)
    log.close()
    expect(idsOf(takeOrphanLog(folder, "another")!.units)).toEqual(["c", "d"])
  })

  it("rotates segments by size and deletes those all of whose units are written", async () => {
    const log = openQueueLog({ folder, fsync: "batch", maxBytes: 1 << 20, segmentBytes: 200, syncIntervalMs: 100 })
    for (let unit = 1; unit <= 20; unit++) log.append([row(`u${unit}`)])
    const segments = () => fs.readdirSync(folder).filter((name) => name.endsWith(".log"))
    const before = segments().length
    expect(before).toBeGreaterThan(3)
    // segments are deleted off the event loop
    log.written(10)
    await vi.waitFor(() => expect(segments().length).toBeLessThan(before))
    log.written(20)
    await vi.waitFor(() => expect(segments()).toHaveLength(1))
    log.close()
    expect(fs.readdirSync(folder)).toEqual([])
  })
})

describe("durable queue replay of another process's log", () => {
  const writer = path.join(import.meta.dirname, "../support/queueLogWriter.ts")
  const startWriter = async (count: number, written: number, segmentBytes: number) => {
    const child = spawn(process.execPath, [writer, folder, String(count), String(written), String(segmentBytes)])
    const owner = await new Promise<string>((resolve, reject) => {
      let output = ""
      child.stdout.on("data", (data: Buffer) => {
        output += data.toString()
        const ready = /ready (\S+)\n/.exec(output)
        if (ready !== null) resolve(ready[1])
      })
      child.once("exit", (code) => reject(new Error(`the writer exited (${code}) before it was ready`)))
    })
    return { child, owner }
  }
  const killed = (child: ChildProcessWithoutNullStreams) =>
    new Promise<void>((resolve) => {
      child.once("exit", () => resolve())
      child.kill("SIGKILL")
    })

  it("leaves a live process's log alone, and takes a killed one's: its units not marked written, a torn tail ignored", async () => {
    const { child, owner } = await startWriter(50, 20, 400)
    try {
      expect(takeOrphanLog(folder, "another")).toBeUndefined()
    } finally {
      await killed(child)
    }
    // a write cut by the kill: half a record at the end of its last segment
    const last = fs.readdirSync(folder).filter((name) => name.endsWith(".log")).sort().at(-1)!
    const torn = unitRecord(51, [row("unit-51")])
    fs.appendFileSync(path.join(folder, last), torn.subarray(0, torn.length - 5))

    const orphan = takeOrphanLog(folder, "another")!
    expect(orphan.owner).toBe(owner)
    expect(idsOf(orphan.units)).toEqual(Array.from({ length: 30 }, (_, index) => `unit-${index + 21}`))
    expect(orphan.ignoredBytes).toBe(torn.length - 5)
    // while taken, nobody else takes it
    expect(takeOrphanLog(folder, "a third")).toBeUndefined()
    orphan.remove()
    expect(fs.readdirSync(folder)).toEqual([])
  })

  it("gives a dead process's log to exactly one taker, and back once let go", async () => {
    const { child } = await startWriter(5, 0, 1 << 16)
    await killed(child)
    const first = takeOrphanLog(folder, "one")!
    expect(takeOrphanLog(folder, "two")).toBeUndefined()
    first.release()
    const second = takeOrphanLog(folder, "two")!
    expect(idsOf(second.units)).toEqual(["unit-1", "unit-2", "unit-3", "unit-4", "unit-5"])
    second.remove()
  })
})
