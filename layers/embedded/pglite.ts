/**
 * The embedded database: `GATEWAY_ANALYTICS_DB_URL` and/or `GATEWAY_RELATIONAL_DB_URL` =
 * `pglite://<folder>` (relative to the working directory) runs PGlite (Postgres compiled to
 * WebAssembly, with pgvector) in a thread of this process (pgliteThread.ts), its data in
 * `<folder>/pgdata`, and serves it on a local port through pglite-socket's multiplexer, which
 * queues the clients' queries on the one PGlite session and keeps a transaction's queries
 * together (and, with `keepingCyclesWhole`, an extended-query cycle's messages). The gateway
 * then reaches it with the Postgres URL it is given in place of the `pglite://` one: the same
 * driver, migrations, store adapters and pg-boss as a Postgres server, no third SQL dialect.
 * Both variables naming one folder share one instance.
 *
 * One process owns a folder at a time: an exclusive lock of the operating system on
 * `<folder>/gateway.lock` (folderLock.ts), whose text names the owner's pid for the message
 * that refuses a second process. `<folder>/FORMAT` names the layout, checked at start-up. The
 * free space of the folder's filesystem is watched (freeSpace.ts): below the minimum, writes
 * pause (`writesPaused`) before the disk is full. The database session is shared by every
 * client of the multiplexer, so session-level advisory locks do not exclude one another here:
 * the tasks' `exclusive` sections use in-process locks (one process anyway).
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ObservabilityDatabase } from "../../src/analytics/database.ts"
import { analyticsUrlVariable } from "../../src/analytics/stores.ts"
import { StoreError } from "../../src/storeError.ts"
import { relationalUrlVariable } from "../../src/relational.ts"
import { StartupError } from "../startup.ts"
import { type LockHolder, lockFolder } from "./folderLock.ts"
import { defaultFreeSpaceSettings, type FreeSpaceSettings, megabytes, watchFreeSpace } from "./freeSpace.ts"
import { runThread } from "./pgliteThread.ts"

type Env = Readonly<Record<string, string | undefined>>

export const embeddedScheme = "pglite://"
/** what `<folder>/FORMAT` says: a folder of another layout is refused rather than misread */
export const embeddedFormat = "gateway-pglite 1 (PGlite 0.5, PostgreSQL 18)"
const formatFile = "FORMAT"
const dataFolder = "pgdata"

export const isEmbeddedUrl = (url: string | undefined): url is string => url !== undefined && url.startsWith(embeddedScheme)

/** the folder a `pglite://` URL names, absolute */
export const embeddedFolder = (url: string, cwd: string = process.cwd()): string => path.resolve(cwd, url.slice(embeddedScheme.length) || ".")

const inUse = (folder: string, pid: number | undefined) =>
  `the embedded database in ${folder} is in use by ${pid === undefined ? "another process" : `process ${pid}`}: one gateway process at a time can open it ` +
  `(stop that one, or move to a Postgres server to share a database between processes)`

/** the layout check: a new folder gets the format; an existing one must have it */
const checkFormat = (folder: string): string | undefined => {
  const file = path.join(folder, formatFile)
  const found = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined
  if (found === undefined) {
    if (fs.existsSync(path.join(folder, dataFolder))) return `${folder} holds a database without a ${formatFile} file: it was not made by this gateway`
    fs.writeFileSync(file, `${embeddedFormat}\n`)
    return undefined
  }
  return found === embeddedFormat ? undefined : `${folder} holds an embedded database of another format ("${found}"; this gateway reads "${embeddedFormat}")`
}

/** a port free on 127.0.0.1 now */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** An embedded database this process runs, as `/health`, `/status` and the write queue see it. */
export interface EmbeddedDatabase {
  readonly folder: string
  /** why writes are not tried now (too little free space, PGlite starting again), undefined while they are */
  readonly writesPaused: () => string | undefined
  readonly status: () => EmbeddedStatus
}

export interface EmbeddedStatus {
  /** `writes_paused`: too little free space; `restarting`: PGlite is starting again (after a PANIC or a crash) */
  readonly state: "ok" | "writes_paused" | "restarting"
  readonly reason?: string | undefined
  readonly freeBytes: number
  readonly minFreeBytes: number
  readonly restarts: number
}

/** the embedded databases this process runs, by the Postgres URL it reaches each by */
const running = new Map<string, EmbeddedDatabase>()

/** the embedded database this process runs at Postgres URL `url`, if it is one */
export const embeddedDatabaseAt = (url: string): EmbeddedDatabase | undefined => running.get(url)

/** every embedded database this process runs */
export const embeddedDatabases = (): ReadonlyArray<EmbeddedDatabase> => [...running.values()]

/**
 * `database` with its writes refused at once, without a round trip, while `embedded` pauses
 * them: the write queue counts each refused try and tries again (its rules), keeping the rows.
 */
export const pausingWrites = (database: ObservabilityDatabase, embedded: EmbeddedDatabase): ObservabilityDatabase => ({
  ...database,
  write: (rows) =>
    Effect.suspend(() => {
      const paused = embedded.writesPaused()
      return paused === undefined ? database.write(rows) : Effect.fail(new StoreError({ message: `embedded database: writes paused: ${paused}` }))
    }),
  writesPaused: embedded.writesPaused
})

export interface EmbeddedOptions {
  readonly freeSpace?: FreeSpaceSettings | undefined
}

const failure = (message: string) => new StartupError({ message: `embedded database: ${message}` })

/**
 * PGlite on `folder`, served on a local port while the scope is open: its Postgres URL; or,
 * when another process holds the folder, what `whenHeld` makes of its holder.
 */
const openEmbedded = (
  folder: string,
  options: EmbeddedOptions,
  whenHeld: (holder: LockHolder) => Effect.Effect<string, StartupError>
): Effect.Effect<string, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const fail = failure
    yield* Effect.try({ try: () => fs.mkdirSync(folder, { recursive: true }), catch: (error) => fail(`cannot create ${folder}: ${(error as Error).message}`) })
    const locking = yield* Effect.acquireRelease(
      Effect.sync(() => lockFolder(folder)),
      (locking) => Effect.sync(() => locking._tag === "Locked" && locking.lock.release())
    )
    if (locking._tag === "Failed") return yield* Effect.fail(fail(locking.message))
    if (locking._tag === "Held") return yield* whenHeld(locking.holder)
    const { lock } = locking
    const formatProblem = checkFormat(folder)
    if (formatProblem !== undefined) return yield* Effect.fail(fail(formatProblem))
    const freeSpace = yield* Effect.mapError(watchFreeSpace(folder, options.freeSpace ?? defaultFreeSpaceSettings), fail)
    const port = yield* Effect.tryPromise({ try: freePort, catch: (error) => fail(`no free local port: ${(error as Error).message}`) })
    const thread = yield* Effect.mapError(
      runThread({ dataDir: path.join(folder, dataFolder), port }, freeSpace),
      (why) => fail(`PGlite could not open ${folder} (served on 127.0.0.1:${port}): ${why}`)
    )
    // the port beside the pid: a command run while this process holds the folder connects to it
    lock.notePort(port)
    const url = urlOf(port)
    const database: EmbeddedDatabase = {
      folder,
      writesPaused: () => thread.down() ?? freeSpace().low,
      status: () => {
        const space = freeSpace()
        const down = thread.down()
        return {
          state: down !== undefined ? "restarting" : space.low !== undefined ? "writes_paused" : "ok",
          reason: down ?? space.low,
          freeBytes: space.freeBytes,
          minFreeBytes: space.minFreeBytes,
          restarts: thread.restarts()
        }
      }
    }
    yield* Effect.acquireRelease(Effect.sync(() => running.set(url, database)), () => Effect.sync(() => running.delete(url)))
    const space = freeSpace()
    yield* Effect.logInfo(
      `embedded database: ${folder} (PGlite with pgvector, in its own thread), served on 127.0.0.1:${port} to this process; ` +
        (space.minFreeBytes === 0 ? "writes never pause for free space" : `writes pause below ${megabytes(space.minFreeBytes)} free (${megabytes(space.freeBytes)} now)`)
    )
    return url
  })

/** PGlite on `folder`, served on a local port while the scope is open: its Postgres URL (refused when another process holds it) */
export const startEmbedded = (folder: string, options: EmbeddedOptions = {}): Effect.Effect<string, StartupError, Scope.Scope> =>
  openEmbedded(folder, options, (holder) => Effect.fail(failure(inUse(folder, holder.pid))))

/** the Postgres URLs this process reaches embedded databases by (`isEmbeddedServer`) */
const embeddedServers = new Set<string>()

const urlOf = (port: number) => {
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  embeddedServers.add(url)
  return url
}

/** whether `url` is the Postgres URL of an embedded database (given by `withEmbeddedDatabases`) */
export const isEmbeddedServer = (url: string): boolean => embeddedServers.has(url)

/**
 * `env` with each `pglite://` database URL replaced by the Postgres URL of its embedded server,
 * started for the scope (once per folder); `env` itself when it names none. With `shareRunning`
 * (one-shot commands: creating an API key, an export), a folder another gateway process holds
 * is reached through that process's server instead of being refused.
 */
export const withEmbeddedDatabases = (
  env: Env,
  options: EmbeddedOptions & { readonly shareRunning?: boolean } = {}
): Effect.Effect<Env, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const variables = [analyticsUrlVariable, relationalUrlVariable].filter((name) => isEmbeddedUrl(env[name]))
    if (variables.length === 0) return env
    const urls = new Map<string, string>()
    const rewritten: Record<string, string | undefined> = { ...env }
    for (const name of variables) {
      const folder = embeddedFolder(env[name]!)
      let url = urls.get(folder)
      if (url === undefined) url = options.shareRunning === true ? yield* shareOrStart(folder, options) : yield* startEmbedded(folder, options)
      urls.set(folder, url)
      rewritten[name] = url
    }
    return rewritten
  })

/** the server of the process holding `folder` (its port is in the lock file once it serves), else one started here */
const shareOrStart = (folder: string, options: EmbeddedOptions) =>
  openEmbedded(folder, options, (holder) =>
    holder.port === undefined ? Effect.fail(failure(inUse(folder, holder.pid))) : Effect.succeed(urlOf(holder.port)))

/** whether `env` names an embedded database */
export const usesEmbeddedDatabase = (env: Env): boolean =>
  isEmbeddedUrl(env[analyticsUrlVariable]) || isEmbeddedUrl(env[relationalUrlVariable])
