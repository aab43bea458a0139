/**
 * The free-space watch of an embedded database's folder: `statfs` of its filesystem every
 * `checkIntervalMs` (`[gateway.embedded_database]`). Below `min_free_bytes` the gateway stops
 * writing to the database, before the disk is full: PGlite meets a full disk in the middle of
 * a WAL write with a PANIC, which stops it until it is started again. Writes resume once a
 * tenth more than the minimum is free, so that a disk at the edge does not flap; each change
 * is logged once. With `min_free_bytes = 0` writes never pause, and the free space is still
 * measured (a PGlite stopped by a full disk is started again once space is freed).
 */
import * as fs from "node:fs"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export interface FreeSpaceSettings {
  /** undefined: `defaultMinFreeBytesOf` the filesystem's size; 0: writes never pause */
  readonly minFreeBytes?: number | undefined
  readonly checkIntervalMs: number
}

/**
 * The larger of 1% of the filesystem and 256 MiB (a few 16 MB WAL segments and the largest
 * batch, with room to spare), but at most 10% of it: a small volume (a 200 MB one) would
 * otherwise never have room.
 */
export const defaultMinFreeBytesOf = (totalBytes: number) =>
  Math.min(Math.max(256 * 1024 * 1024, Math.floor(totalBytes / 100)), Math.floor(totalBytes / 10))
export const defaultFreeSpaceSettings: FreeSpaceSettings = { checkIntervalMs: 1000 }

export interface FreeSpace {
  /** bytes this process may still write in the filesystem */
  readonly freeBytes: number
  readonly totalBytes: number
  readonly minFreeBytes: number
  /** why writes pause (too little free space), undefined while there is room */
  readonly low: string | undefined
}

export const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`

/** the bytes this process may still write in the filesystem `stats` describes */
export const freeBytesOf = (stats: fs.StatsFsBase<number>) => stats.bavail * stats.bsize

const measure = (stats: fs.StatsFsBase<number>) => ({ freeBytes: freeBytesOf(stats), totalBytes: stats.blocks * stats.bsize })

/** The free space of `folder`'s filesystem as last measured, while the scope is open. */
export const watchFreeSpace = (folder: string, settings: FreeSpaceSettings): Effect.Effect<() => FreeSpace, string, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* Effect.try({ try: () => measure(fs.statfsSync(folder)), catch: (error) => `cannot measure the free space of ${folder}: ${(error as Error).message}` })
    const minFreeBytes = settings.minFreeBytes ?? defaultMinFreeBytesOf(first.totalBytes)
    const resumeBytes = Math.floor(minFreeBytes * 1.1)
    const lowReason = (freeBytes: number) =>
      `${megabytes(freeBytes)} free in ${folder}, below min_free_bytes (${megabytes(minFreeBytes)}; writes resume at ${megabytes(resumeBytes)})`
    const spaceOf = (measured: { readonly freeBytes: number; readonly totalBytes: number }, low: boolean): FreeSpace => ({
      ...measured,
      minFreeBytes,
      low: low ? lowReason(measured.freeBytes) : undefined
    })
    let space = spaceOf(first, first.freeBytes < minFreeBytes)
    const logPaused = (now: FreeSpace) => Effect.logWarning(`embedded database: writes paused: ${now.low}`)
    if (space.low !== undefined) yield* logPaused(space)

    const check = Effect.gen(function*() {
      // a folder that cannot be measured (removed under the gateway) changes nothing: PGlite says what is wrong
      const measured = yield* Effect.tryPromise(() => fs.promises.statfs(folder)).pipe(Effect.map(measure), Effect.option)
      if (measured._tag === "None") return
      const wasLow = space.low !== undefined
      const low = wasLow ? measured.value.freeBytes < resumeBytes : measured.value.freeBytes < minFreeBytes
      space = spaceOf(measured.value, low)
      if (low && !wasLow) yield* logPaused(space)
      if (!low && wasLow) yield* Effect.logInfo(`embedded database: writes resume: ${megabytes(space.freeBytes)} free in ${folder}`)
    })
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(settings.checkIntervalMs)), check)))
    return () => space
  })
