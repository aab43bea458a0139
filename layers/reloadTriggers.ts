/**
 * What reloads the configuration besides `POST /internal/config/reload`: `SIGHUP`, and with
 * `--watch-config` a change to any file it was read from (the configuration files, the
 * templates and schemas they name). Both reload this process only: with workers the primary
 * forwards SIGHUP to each, and each worker watches the files itself.
 *
 * Files are watched through their folders (`fs.watch` on each folder, not on each file): editors
 * save by writing a new file and renaming it over the old one, which a watch on the file itself
 * stops seeing. Changes are gathered for `settleMs`, so that a save of several files reloads once;
 * then the files are read twice, `stableMs` apart, and loaded only when both reads are the same
 * (else the wait starts again): a file still being written (truncated, then written, or written
 * in pieces) is not loaded half way. Neither trigger forces a reload (layers/reload.ts).
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ReloadOptions, ReloadOutcome } from "../src/config/reload.ts"
import { globRoot } from "./configLoader.ts"

/** how long changes are gathered before one reload */
const settleMs = 250

/** how far apart the two reads of the files are that must agree before they are loaded */
const stableMs = 250

/** SHA-256 of the files' paths and contents (a file that cannot be read, a folder, counts as such) */
const fingerprint = (files: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const file of [...files].sort()) {
    hash.update(`${file}\0`)
    try {
      hash.update(fs.readFileSync(file))
    } catch {
      hash.update("\0unreadable")
    }
    hash.update("\0")
  }
  return hash.digest("hex")
}

interface Reloadable {
  readonly reloadLocal: (trigger: string, options?: ReloadOptions) => Effect.Effect<ReloadOutcome>
  readonly onFilesChanged: (listener: (files: ReadonlyArray<string>) => void) => void
}

/**
 * Watches the folders of `files`; `changed` is told which of them changed, at most once per
 * `settleMs`, once the files read the same twice `stableMs` apart. `watch(files)` replaces what
 * is watched; `close` stops.
 */
const makeFolderWatcher = (changed: (files: ReadonlyArray<string>) => void) => {
  const watchers = new Map<string, fs.FSWatcher>()
  let watched = new Set<string>()
  let pending: NodeJS.Timeout | undefined
  const seen = new Set<string>()

  let glob: { readonly folder: string; readonly pattern: string } | undefined
  let treeWatcher: fs.FSWatcher | undefined

  const onEvent = (folder: string) => (_event: string, name: string | Buffer | null) => {
    const file = name === null ? undefined : path.join(folder, name.toString())
    // a folder's event without a name, about one of the files read, or about a new match of the glob counts
    if (file !== undefined && !watched.has(file) && !(glob !== undefined && path.matchesGlob(file, glob.pattern))) return
    seen.add(file ?? folder)
    settle()
  }

  /** (again) waits `settleMs` for the changes to end: any change in the meantime restarts the wait */
  const settle = () => {
    clearTimeout(pending)
    pending = setTimeout(checkStable, settleMs)
  }

  const checkStable = () => {
    const files = [...new Set([...watched, ...seen])]
    const first = fingerprint(files)
    pending = setTimeout(() => {
      // still being written: wait for it to end
      if (fingerprint(files) !== first) return settle()
      const changedFiles = [...seen]
      seen.clear()
      changed(changedFiles)
    }, stableMs)
  }

  const watch = (files: ReadonlyArray<string>) => {
    watched = new Set(files)
    const folders = new Set(files.map((file) => path.dirname(file)))
    for (const [folder, watcher] of watchers) {
      if (folders.has(folder)) continue
      watcher.close()
      watchers.delete(folder)
    }
    for (const folder of folders) {
      if (watchers.has(folder)) continue
      try {
        const watcher = fs.watch(folder, { persistent: false }, onEvent(folder))
        // a folder removed or unreadable later: stop watching it, the other folders still count
        watcher.on("error", () => {
          watcher.close()
          watchers.delete(folder)
        })
        watchers.set(folder, watcher)
      } catch {
        // a folder that cannot be watched (gone): the next successful load names the files again
      }
    }
  }

  /** a glob's folder, watched with its subfolders: a new matching file reloads too */
  const watchGlob = (root: { readonly folder: string; readonly pattern: string }) => {
    glob = root
    try {
      treeWatcher = fs.watch(root.folder, { persistent: false, recursive: true }, onEvent(root.folder))
      treeWatcher.on("error", () => treeWatcher?.close())
    } catch {
      // the folder is gone: the files read are still watched
    }
  }

  const close = () => {
    clearTimeout(pending)
    for (const watcher of watchers.values()) watcher.close()
    watchers.clear()
    treeWatcher?.close()
  }

  return { watch, watchGlob, close }
}

/** what `--watch-config` watches: the files read, and the `--config-file` value (a glob's new matches count) */
export interface WatchedConfig {
  readonly files: ReadonlyArray<string>
  readonly pattern: string | undefined
}

export interface ReloadTriggersOptions {
  /** `--watch-config`: what to watch */
  readonly watched?: WatchedConfig | undefined
  /** with workers: calls its listener when the primary asks for a forced reload (another worker's); returns what stops it */
  readonly onForcedReloadAsked?: ((listener: () => void) => () => void) | undefined
}

/**
 * SIGHUP reloads for as long as the scope lasts; so does a change of the watched configuration
 * when given (`--watch-config`), and the primary's request for a forced reload (with workers).
 */
export const reloadTriggers = (generations: Reloadable, { onForcedReloadAsked, watched }: ReloadTriggersOptions): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const run = (trigger: string, options?: ReloadOptions) => {
      Effect.runForkWith(context)(generations.reloadLocal(trigger, options))
    }
    const onHangup = () => run("SIGHUP")
    yield* Effect.acquireRelease(
      Effect.sync(() => process.on("SIGHUP", onHangup)),
      () => Effect.sync(() => process.off("SIGHUP", onHangup))
    )
    if (onForcedReloadAsked !== undefined) {
      yield* Effect.acquireRelease(
        Effect.sync(() => onForcedReloadAsked(() => run("another worker's forced reload", { force: true }))),
        (stop) => Effect.sync(stop)
      )
    }
    if (watched === undefined) return
    const watcher = yield* Effect.acquireRelease(
      Effect.sync(() => makeFolderWatcher((files) => run(`${files.join(", ")} changed`))),
      (made) => Effect.sync(made.close)
    )
    watcher.watch(watched.files)
    const root = watched.pattern === undefined ? undefined : globRoot(watched.pattern)
    if (root !== undefined) watcher.watchGlob(root)
    generations.onFilesChanged(watcher.watch)
    yield* Effect.logInfo(
      `configuration: watching ${watched.files.length} file${watched.files.length === 1 ? "" : "s"}${root === undefined ? "" : ` and new matches of ${root.pattern}`} for changes (--watch-config)`
    )
  })
