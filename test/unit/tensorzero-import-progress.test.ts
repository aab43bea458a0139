/**
 * The import's progress and summary (layers/tensorzeroImport/progress.ts): a line redrawn in
 * place on a terminal, plain lines every few seconds otherwise, the rate and the ETA, and a
 * summary that lists every kind of skip with its first ids.
 */
import { describe, expect, it } from "vitest"
import { makeProgress, progressLine, summaryText } from "../../layers/tensorzeroImport/progress.ts"

const recorder = (isTTY: boolean) => {
  const written: Array<string> = []
  return { output: { isTTY, write: (text: string) => void written.push(text) }, written }
}

describe("progress", () => {
  it("gives rows read, written and skipped, the rate and an ETA from the source's estimate", () => {
    let now = 0
    const { output } = recorder(false)
    const progress = makeProgress(output, () => now)
    const tally = progress.start("inferences", 10_000)
    tally.read = 2_000
    tally.written = 1_990
    tally.skipped = 10
    now = 4_000
    expect(progressLine(tally, now)).toBe("inferences: 2,000 of ~10,000 read, 1,990 written, 10 skipped, 500 rows/s, ETA 16s")
  })

  it("redraws one line on a terminal and ends it with the stream", () => {
    let now = 0
    const { output, written } = recorder(true)
    const progress = makeProgress(output, () => now)
    const tally = progress.start("feedback", undefined)
    for (let page = 1; page <= 5; page++) {
      now += 100
      tally.read += 10
      progress.tick(tally)
    }
    progress.done(tally)
    expect(written.every((text) => text.startsWith("\r\x1b[2K"))).toBe(true)
    expect(written.length).toBeLessThan(5)
    expect(written.at(-1)).toMatch(/^\r\x1b\[2Kfeedback: 50 read, .*\n$/)
  })

  it("writes plain lines at most every five seconds when not on a terminal, and one at the end", () => {
    let now = 0
    const { output, written } = recorder(false)
    const progress = makeProgress(output, () => now)
    const tally = progress.start("datapoints", 100)
    for (let second = 1; second <= 12; second++) {
      now = second * 1000
      tally.read++
      progress.tick(tally)
    }
    progress.done(tally)
    expect(written).toHaveLength(3)
    expect(written.every((line) => line.endsWith("\n") && !line.includes("\r"))).toBe(true)
  })

  it("sums up every stream, and each kind of skip with its count, its first ids and what was wrong", () => {
    const { output } = recorder(false)
    const progress = makeProgress(output, () => 0)
    const inferences = progress.start("inferences", undefined)
    inferences.read = 25
    inferences.written = 13
    for (let index = 0; index < 12; index++) progress.skipped(inferences, `id-${index}`, { reason: "input is not JSON", detail: `{bad ${index}` })
    const keys = progress.start("api_keys", undefined)
    keys.read = 2
    keys.written = 2
    const text = summaryText([inferences, keys], false)
    const [header, first, second] = text.split("\n")
    expect(header).toMatch(/^stream\s+read\s+written\s+skipped$/)
    expect(first).toMatch(/^inferences\s+25\s+13\s+12$/)
    expect(second).toMatch(/^api_keys\s+2\s+2\s+0$/)
    expect(text).toContain("inferences: 12 × input is not JSON")
    expect(text).toContain("    id-0: {bad 0")
    expect(text).toContain("    id-9: {bad 9")
    expect(text).not.toContain("id-10")
    expect(text).toContain("... and 2 more")
  })
})
