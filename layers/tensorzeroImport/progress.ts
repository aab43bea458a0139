/**
 * What `gateway import-tensorzero` shows while it runs and when it ends: per stream, rows read,
 * written and skipped, the rate and an ETA; on a terminal one line redrawn in place, otherwise a
 * plain line every few seconds and at the end of each stream. Then the summary: a table of every
 * stream, and each kind of skip with its count and the first ids (and what was wrong).
 */
import type { Skip } from "../../src/tensorzeroImport/map.ts"

export interface Output {
  readonly write: (text: string) => void
  /** a terminal: the progress line is redrawn in place */
  readonly isTTY: boolean
}

/** the ids listed per kind of skip: the count says how many more there were */
const listedSkips = 10
const plainInterval = 5_000
const ttyInterval = 250

export interface StreamTally {
  readonly stream: string
  read: number
  written: number
  skipped: number
  /** skips by reason: how many, and the first ones */
  readonly skips: Map<string, { count: number; readonly first: Array<{ readonly id: string; readonly detail?: string | undefined }> }>
  readonly startedAt: number
  /** rows the source said it holds at the start (for the ETA) */
  estimate: number | undefined
}

const number = (value: number) => value.toLocaleString("en-US")

const duration = (ms: number): string => {
  const seconds = Math.round(ms / 1000)
  return seconds < 60 ? `${seconds}s` : seconds < 3600 ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s` : `${Math.floor(seconds / 3600)}h${String(Math.floor(seconds / 60) % 60).padStart(2, "0")}m`
}

export const progressLine = (tally: StreamTally, now: number): string => {
  const elapsed = Math.max(1, now - tally.startedAt)
  const rate = (tally.read * 1000) / elapsed
  const left = tally.estimate === undefined ? undefined : Math.max(0, tally.estimate - tally.read)
  const eta = left === undefined || rate === 0 ? "" : `, ETA ${duration((left / rate) * 1000)}`
  const of = tally.estimate === undefined ? "" : ` of ~${number(tally.estimate)}`
  return `${tally.stream}: ${number(tally.read)}${of} read, ${number(tally.written)} written, ${number(tally.skipped)} skipped, ${number(Math.round(rate))} rows/s${eta}`
}

export const makeProgress = (output: Output, now: () => number = Date.now) => {
  let shownAt = 0
  let drawn = false
  /** the counts last shown, so that the end of a stream does not repeat a line just written */
  let shownCounts = ""
  const show = (tally: StreamTally, final: boolean) => {
    const at = now()
    if (!final && at - shownAt < (output.isTTY ? ttyInterval : plainInterval)) return
    const counts = `${tally.stream} ${tally.read} ${tally.written} ${tally.skipped}`
    if (final && !output.isTTY && counts === shownCounts) return
    shownAt = at
    shownCounts = counts
    if (output.isTTY) {
      output.write(`\r\x1b[2K${progressLine(tally, at)}${final ? "\n" : ""}`)
      drawn = !final
    } else {
      output.write(`${progressLine(tally, at)}\n`)
    }
  }
  return {
    start: (stream: string, estimate: number | undefined): StreamTally => ({
      stream,
      read: 0,
      written: 0,
      skipped: 0,
      skips: new Map(),
      startedAt: now(),
      estimate
    }),
    skipped: (tally: StreamTally, id: string, skip: Skip) => {
      tally.skipped++
      const kind = tally.skips.get(skip.reason)
      if (kind === undefined) tally.skips.set(skip.reason, { count: 1, first: [{ id, detail: skip.detail }] })
      else {
        kind.count++
        if (kind.first.length < listedSkips) kind.first.push({ id, detail: skip.detail })
      }
    },
    /** after each page */
    tick: (tally: StreamTally) => show(tally, false),
    /** at the end of a stream */
    done: (tally: StreamTally) => show(tally, true),
    /** a line of its own (the progress line, if drawn, is ended first) */
    line: (text: string) => {
      if (drawn) output.write("\n")
      drawn = false
      output.write(`${text}\n`)
    }
  }
}

/** the summary printed at the end */
export const summaryText = (tallies: ReadonlyArray<StreamTally>, dryRun: boolean): string => {
  const header = ["stream", "read", dryRun ? "would write" : "written", "skipped"]
  const rows = tallies.map((tally) => [tally.stream, number(tally.read), number(tally.written), number(tally.skipped)])
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join("  ")
  const lines = [line(header), ...rows.map(line)]
  const skipped = tallies.filter((tally) => tally.skips.size > 0)
  if (skipped.length > 0) {
    lines.push("", "skipped rows, by reason:")
    for (const tally of skipped) {
      for (const [reason, kind] of tally.skips) {
        lines.push(`  ${tally.stream}: ${number(kind.count)} × ${reason}`)
        for (const { id, detail } of kind.first) lines.push(`    ${id}${detail === undefined ? "" : `: ${detail}`}`)
        if (kind.count > kind.first.length) lines.push(`    ... and ${number(kind.count - kind.first.length)} more`)
      }
    }
  }
  return lines.join("\n")
}
