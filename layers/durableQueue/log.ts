/**
 * The write queue's durable form (`[gateway.observability.durable_queue]`): an append-only log
 * of the units the queue holds, so that a process killed however it dies (SIGKILL, the OOM
 * killer, a node lost) loses none of the rows it answered for.
 *
 * - One log per process in the configured folder: `<owner>.lock`, held with an exclusive lock
 *   of the operating system for the process's life (the kernel drops it when the process dies,
 *   kill -9 included), and segment files `<owner>.<n>.log`. The owner's name carries the start
 *   time, the pid and random bytes: a replacement process (or a worker of `--workers`) never
 *   takes another's name.
 * - A unit is appended (one write(2)) before the answer it belongs to leaves: the page cache
 *   keeps it through the death of the process. The `fsync` policy says what survives the
 *   machine: `batch` syncs the appends made since the last sync together, on the thread pool
 *   and after their answers, at most every `syncIntervalMs`; `always` syncs each append before
 *   its answer; `never` leaves it to the operating system.
 * - Once the queue has written a batch, a `written` record says so; a segment all of whose units
 *   are written is deleted (a segment is closed for appends past `segmentBytes`).
 * - Bounded: past `maxBytes` of segments, an append is refused and the queue counts the unit as
 *   dropped (full), as it does past its own bounds.
 * - A log whose lock is free belongs to a process that died (or stopped with units it could not
 *   write): any process on the folder (the same gateway restarted, or another instance on
 *   shared storage) takes its lock, writes its units not marked written, and deletes it.
 */
import type { Buffer } from "node:buffer"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { randomBytes } from "node:crypto"
import type { EncodedRow } from "../../src/analytics/database.ts"
import { type LoggedUnit, readRecords, unitRecord, writtenRecord } from "./records.ts"

export type FsyncPolicy = "batch" | "always" | "never"

export interface DurableQueueOptions {
  /** the folder of the logs (created if missing) */
  readonly folder: string
  readonly fsync: FsyncPolicy
  /** the bytes of segments a process keeps, at most */
  readonly maxBytes: number
  /** a segment past this many bytes takes no more appends */
  readonly segmentBytes: number
  /** `batch`: the least time between two syncs */
  readonly syncIntervalMs: number
}

/** fs-native-extensions' lock (an open file description lock on Linux), loaded once */
let nativeLock: ((fd: number) => boolean) | undefined
const tryLock = (fd: number): boolean => {
  nativeLock ??= (createRequire(import.meta.url)("fs-native-extensions") as { tryLock: (fd: number) => boolean }).tryLock
  return nativeLock(fd)
}

const lockSuffix = ".lock"
const takingSuffix = ".taking"
const segmentPattern = /^(.+)\.(\d+)\.log$/

const segmentName = (owner: string, index: number) => `${owner}.${String(index).padStart(6, "0")}.log`

/** the segment files of `owner` in `folder`, oldest first */
const segmentsOf = (folder: string, owner: string): Array<string> =>
  fs.readdirSync(folder)
    .filter((name) => segmentPattern.exec(name)?.[1] === owner)
    .sort()

interface Segment {
  readonly file: string
  readonly fd: number
  bytes: number
  /** the last unit appended to it (0: none) */
  lastSequence: number
}

/** What became of an append: the unit's sequence number, or why it is not in the log. */
export type Appended = number | "full" | { readonly failed: string }

export interface QueueLog {
  readonly owner: string
  /** appends a unit's rows before its answer leaves */
  readonly append: (rows: ReadonlyArray<EncodedRow>) => Appended
  /** every unit up to `sequence` is stored or dropped: said in the log, and segments all done with are deleted */
  readonly written: (sequence: number) => void
  /** the bytes of the segments kept */
  readonly bytes: () => number
  /** closes the log: its files are deleted when every unit appended is done with, else kept for a replay */
  readonly close: () => void
}

const sameFile = (a: fs.Stats, b: fs.Stats | undefined) => b !== undefined && a.ino === b.ino && a.dev === b.dev

/** Opens this process's log in `options.folder`; throws when the folder cannot hold it. */
export const openQueueLog = (options: DurableQueueOptions): QueueLog => {
  fs.mkdirSync(options.folder, { recursive: true })
  const owner = `queue-${Date.now().toString(36)}-${process.pid}-${randomBytes(3).toString("hex")}`
  // the lock is taken under a name no one looks for, then renamed: a file named `.lock` is always held or free for good
  const taking = path.join(options.folder, `${owner}${takingSuffix}`)
  const lockFile = path.join(options.folder, `${owner}${lockSuffix}`)
  const lockFd = fs.openSync(taking, "wx", 0o644)
  if (!tryLock(lockFd)) {
    fs.closeSync(lockFd)
    throw new Error(`cannot lock ${taking}`)
  }
  fs.writeSync(lockFd, `${process.pid}\n`)
  fs.renameSync(taking, lockFile)

  const segments: Array<Segment> = []
  let segmentIndex = 0
  let keptBytes = 0
  let sequence = 0
  let writtenUpTo = 0
  let closed = false

  const openSegment = (): Segment => {
    segmentIndex++
    const file = path.join(options.folder, segmentName(owner, segmentIndex))
    const segment: Segment = { file, fd: fs.openSync(file, "wx", 0o644), bytes: 0, lastSequence: 0 }
    segments.push(segment)
    return segment
  }
  let current: Segment | undefined

  // `batch`: one sync for the appends since the last, on the thread pool, at most every
  // `syncIntervalMs` and one at a time. A sync costs this process ~250 us of CPU (measured on a
  // virtual disk): one per turn of the event loop cost 444 us per request at saturation (bench).
  let syncing = false
  let syncWanted = false
  let lastSyncAt = 0
  /** syncs running on the thread pool (the periodic one, and those of segments closed for appends) */
  let inFlight = 0
  /** descriptors of deleted segments, closed once no sync may be using them */
  let closeAfterSync: Array<number> = []
  const syncInBackground = (fd: number, done: () => void) => {
    inFlight++
    fs.fdatasync(fd, () => {
      inFlight--
      if (inFlight === 0) {
        for (const closing of closeAfterSync) fs.closeSync(closing)
        closeAfterSync = []
      }
      done()
    })
  }
  const sync = () => {
    const segment = current
    if (closed || segment === undefined) return
    syncing = true
    syncWanted = false
    lastSyncAt = Date.now()
    syncInBackground(segment.fd, () => {
      syncing = false
      if (syncWanted) scheduleSync()
    })
  }
  const scheduleSync = () => {
    const wait = lastSyncAt + options.syncIntervalMs - Date.now()
    if (wait <= 0) setImmediate(sync)
    else setTimeout(sync, wait).unref()
  }
  const wantSync = () => {
    if (syncWanted) return
    syncWanted = true
    if (!syncing) scheduleSync()
  }
  const closeFd = (fd: number) => {
    if (inFlight > 0) closeAfterSync.push(fd)
    else fs.closeSync(fd)
  }

  const writeRecord = (segment: Segment, record: Buffer) => {
    let offset = 0
    while (offset < record.length) offset += fs.writeSync(segment.fd, record, offset)
    segment.bytes += record.length
    keptBytes += record.length
  }

  const append = (rows: ReadonlyArray<EncodedRow>): Appended => {
    if (closed) return { failed: "the log is closed" }
    const record = unitRecord(sequence + 1, rows)
    if (keptBytes + record.length > options.maxBytes) return "full"
    try {
      if (current === undefined || current.bytes >= options.segmentBytes) {
        // `batch`: the closed segment's last appends are synced off the event loop (up to a
        // segment of dirty pages: tens of milliseconds that would stall every answer)
        if (current !== undefined && options.fsync === "batch") syncInBackground(current.fd, () => {})
        current = openSegment()
      }
      writeRecord(current, record)
      if (options.fsync === "always") fs.fdatasyncSync(current.fd)
      else if (options.fsync === "batch") wantSync()
    } catch (error) {
      // a record cut short would hide the ones after it: the next append starts a new segment
      current = undefined
      return { failed: error instanceof Error ? error.message : String(error) }
    }
    sequence++
    current.lastSequence = sequence
    return sequence
  }

  /** segments being unlinked: removed at once on close, so that none outlives its lock */
  const deleting = new Set<string>()
  // unlinked off the event loop: freeing a segment's blocks takes milliseconds
  const deleteSegment = (segment: Segment) => {
    deleting.add(segment.file)
    fs.rm(segment.file, { force: true }, () => deleting.delete(segment.file))
    closeFd(segment.fd)
    keptBytes -= segment.bytes
  }

  const written = (upTo: number) => {
    if (closed || upTo <= writtenUpTo) return
    writtenUpTo = upTo
    // the oldest segments all of whose units are written go; the one appended to stays
    while (segments.length > 0 && segments[0] !== current && segments[0].lastSequence <= writtenUpTo) {
      deleteSegment(segments.shift()!)
    }
    if (current === undefined) return
    try {
      writeRecord(current, writtenRecord(upTo))
    } catch {
      // without the mark, a replay writes these units again: the writes are idempotent by id
      current = undefined
    }
  }

  const close = () => {
    if (closed) return
    closed = true
    const done = writtenUpTo >= sequence
    for (const file of deleting) fs.rmSync(file, { force: true })
    for (const segment of segments) {
      if (done) fs.rmSync(segment.file, { force: true })
      closeFd(segment.fd)
    }
    // removed while held, then closed: a process that opened it meanwhile sees it is gone
    if (done) fs.rmSync(lockFile, { force: true })
    fs.closeSync(lockFd)
  }

  return { owner, append, written, bytes: () => keptBytes, close }
}

/** A dead process's log, locked by this one: its units not marked written, to write. */
export interface OrphanLog {
  readonly owner: string
  readonly units: ReadonlyArray<LoggedUnit>
  /** bytes of its files that could not be read (torn tails, damage) */
  readonly ignoredBytes: number
  /** deletes its files (its units are written) */
  readonly remove: () => void
  /** lets it go, kept for another try */
  readonly release: () => void
}

/**
 * a lock a process died taking (before it had a log): removed once free, and a minute old (a
 * younger one may be a starting process's, about to take it)
 */
const removeAbandoned = (file: string) => {
  let fd: number
  try {
    if (fs.statSync(file).mtimeMs > Date.now() - 60_000) return
    fd = fs.openSync(file, "r+")
  } catch {
    return
  }
  if (tryLock(fd)) fs.rmSync(file, { force: true })
  fs.closeSync(fd)
}

/**
 * Takes the log of a dead process in `folder` (not `ownOwner`'s, nor one in `skip`), or
 * undefined when every log there is held by a live process.
 */
export const takeOrphanLog = (folder: string, ownOwner: string, skip: ReadonlySet<string> = new Set()): OrphanLog | undefined => {
  for (const name of fs.readdirSync(folder)) {
    if (name.endsWith(takingSuffix)) {
      removeAbandoned(path.join(folder, name))
      continue
    }
    if (!name.endsWith(lockSuffix)) continue
    const owner = name.slice(0, -lockSuffix.length)
    if (owner === ownOwner || skip.has(owner)) continue
    const lockFile = path.join(folder, name)
    let fd: number
    try {
      fd = fs.openSync(lockFile, "r+")
    } catch {
      continue // removed by its owner as it stopped
    }
    if (!tryLock(fd) || !sameFile(fs.fstatSync(fd), fs.statSync(lockFile, { throwIfNoEntry: false }))) {
      fs.closeSync(fd)
      continue
    }
    const files = segmentsOf(folder, owner).map((segment) => path.join(folder, segment))
    const units: Array<LoggedUnit> = []
    let writtenUpTo = 0
    let ignoredBytes = 0
    for (const file of files) {
      const contents = readRecords(fs.readFileSync(file))
      units.push(...contents.units)
      writtenUpTo = Math.max(writtenUpTo, contents.writtenUpTo)
      ignoredBytes += contents.ignoredBytes
    }
    return {
      owner,
      units: units.filter((unit) => unit.sequence > writtenUpTo),
      ignoredBytes,
      remove: () => {
        for (const file of files) fs.rmSync(file, { force: true })
        fs.rmSync(lockFile, { force: true })
        fs.closeSync(fd)
      },
      release: () => fs.closeSync(fd)
    }
  }
  return undefined
}

/** the encoded bytes of a logged unit's rows, as the queue counts them */
export const rowBytes = (rows: ReadonlyArray<EncodedRow>): number => {
  let bytes = 0
  for (const row of rows) bytes += row.text.length
  return bytes
}
