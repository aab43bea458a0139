/**
 * The embedded database: `GATEWAY_ANALYTICS_DB_URL` and/or `GATEWAY_RELATIONAL_DB_URL` =
 * `pglite://<folder>` (relative to the working directory) runs PGlite (Postgres compiled to
 * WebAssembly, with pgvector) in this process, its data in `<folder>/pgdata`, and serves it on a
 * local port through pglite-socket's multiplexer, which queues the clients' queries on the one
 * PGlite session and keeps a transaction's queries together (and, with `keepingCyclesWhole`, an
 * extended-query cycle's messages). The gateway then reaches it with the Postgres URL it is
 * given in place of the `pglite://` one: the same driver, migrations, store adapters and pg-boss
 * as a Postgres server, no third SQL dialect. Both variables naming one folder share one
 * instance.
 *
 * One process owns a folder at a time: `<folder>/gateway.lock` holds its pid, and a second
 * process is refused with a message naming the owner (a lock left by a process that died is
 * taken over). `<folder>/FORMAT` names the layout, checked at start-up. The database session is
 * shared by every client of the multiplexer, so session-level advisory locks do not exclude one
 * another here: the tasks' `exclusive` sections use in-process locks (one process anyway).
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { analyticsUrlVariable } from "../../src/observability/stores.ts"
import { relationalUrlVariable } from "../../src/auth/store.ts"
import { StartupError } from "../startup.ts"

type Env = Readonly<Record<string, string | undefined>>

export const embeddedScheme = "pglite://"
/** what `<folder>/FORMAT` says: a folder of another layout is refused rather than misread */
export const embeddedFormat = "gateway-pglite 1 (PGlite 0.5, PostgreSQL 18)"
const lockFile = "gateway.lock"
const formatFile = "FORMAT"
const dataFolder = "pgdata"

export const isEmbeddedUrl = (url: string | undefined): url is string => url !== undefined && url.startsWith(embeddedScheme)

/** the folder a `pglite://` URL names, absolute */
export const embeddedFolder = (url: string, cwd: string = process.cwd()): string => path.resolve(cwd, url.slice(embeddedScheme.length) || ".")

/** whether process `pid` is alive (signal 0 tests without sending; EPERM: alive, not ours) */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** the live process holding `folder`, with the port it serves the database on (once it does) */
const ownerOf = (folder: string): { readonly pid: number; readonly port?: number } | undefined => {
  try {
    const [pid, port] = fs.readFileSync(path.join(folder, lockFile), "utf8").trim().split(/\s+/).map((part) => Number.parseInt(part, 10))
    if (!Number.isInteger(pid) || pid === process.pid || !alive(pid)) return undefined
    return Number.isInteger(port) ? { pid, port } : { pid }
  } catch {
    return undefined
  }
}

const inUse = (folder: string, pid: number) =>
  `the embedded database in ${folder} is in use by process ${pid}: one gateway process at a time can open it ` +
  `(stop that one, or move to a Postgres server to share a database between processes)`

/** takes `<folder>/gateway.lock` for this process, or says who holds it */
const lock = (folder: string): string | undefined => {
  const file = path.join(folder, lockFile)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: "wx" })
      return undefined
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return `cannot write ${file}: ${(error as Error).message}`
      const owner = ownerOf(folder)
      if (owner !== undefined) return inUse(folder, owner.pid)
      // left by a process that died: taken over
      fs.rmSync(file, { force: true })
    }
  }
  return `cannot take the lock ${file}`
}

const unlock = (folder: string) => {
  const file = path.join(folder, lockFile)
  try {
    if (Number.parseInt(fs.readFileSync(file, "utf8"), 10) === process.pid) fs.rmSync(file, { force: true })
  } catch {
    // already gone
  }
}

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

/** the message types of an extended-query cycle before its Sync: Parse, Bind, Describe, Execute, Close, Flush */
const cycleMessages = new Set(["P", "B", "D", "E", "C", "H"].map((letter) => letter.charCodeAt(0)))
const syncMessage = "S".charCodeAt(0)
const queryMessage = "Q".charCodeAt(0)

/**
 * `db` as pglite-socket's queue sees it, so that an extended-query cycle (Parse ... Sync) of one
 * client runs whole. The queue takes the clients' messages one at a time and, unless a
 * transaction block is open, from whichever client comes next: another client's cycle in the
 * middle of one replaces its unnamed statement and portal or ends its implicit transaction
 * ("portal "" does not exist", or its rows sent to the other client), which any concurrent use
 * of the pools meets. The queue keeps to the client of the last message while
 * `isInTransaction()` holds: saying so from a cycle's first message to its Sync keeps the cycle
 * together. A client gone mid-cycle has its cycle ended (a Sync) before the queue's rollback.
 */
const keepingCyclesWhole = <Db extends {
  isInTransaction(): boolean
  execProtocolRaw(message: Uint8Array): Promise<Uint8Array>
  execProtocolRawStream(message: Uint8Array, options: never): Promise<void>
  exec(query: string): Promise<unknown>
}>(db: Db): Db => {
  let cycleOpen = false
  const overrides: Partial<Record<PropertyKey, unknown>> = {
    isInTransaction: () => cycleOpen || db.isInTransaction(),
    execProtocolRawStream: (message: Uint8Array, options: never) => {
      if (message[0] === syncMessage || message[0] === queryMessage) cycleOpen = false
      else if (cycleMessages.has(message[0])) cycleOpen = true
      return db.execProtocolRawStream(message, options)
    },
    exec: async (query: string) => {
      if (cycleOpen) {
        cycleOpen = false
        await db.execProtocolRaw(new Uint8Array([syncMessage, 0, 0, 0, 4]))
      }
      return db.exec(query)
    }
  }
  return new Proxy(db, {
    get: (target, property) => {
      if (Object.hasOwn(overrides, property)) return overrides[property]
      const value = Reflect.get(target, property, target)
      // PGlite's methods read its private fields: they run on PGlite itself
      return typeof value === "function" ? value.bind(target) : value
    }
  })
}

/** PGlite on `folder`, served on a local port while the scope is open: its Postgres URL */
export const startEmbedded = (folder: string): Effect.Effect<string, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const fail = (message: string) => new StartupError({ message: `embedded database: ${message}` })
    yield* Effect.try({ try: () => fs.mkdirSync(folder, { recursive: true }), catch: (error) => fail(`cannot create ${folder}: ${(error as Error).message}`) })
    yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const problem = lock(folder)
        return problem === undefined ? Effect.void : Effect.fail(fail(problem))
      }),
      () => Effect.sync(() => unlock(folder))
    )
    const formatProblem = checkFormat(folder)
    if (formatProblem !== undefined) return yield* Effect.fail(fail(formatProblem))
    const { PGlite } = yield* Effect.promise(() => import("@electric-sql/pglite"))
    const { vector } = yield* Effect.promise(() => import("@electric-sql/pglite-pgvector"))
    const { PGLiteSocketServer } = yield* Effect.promise(() => import("@electric-sql/pglite-socket"))
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create({ dataDir: path.join(folder, dataFolder), extensions: { vector } }),
        catch: (error) => fail(`PGlite could not open ${folder}: ${(error as Error).message}`)
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const port = yield* Effect.tryPromise({ try: freePort, catch: (error) => fail(`no free local port: ${(error as Error).message}`) })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db: keepingCyclesWhole(db), host: "127.0.0.1", port, maxConnections: 128 })
          await server.start()
          return server
        },
        catch: (error) => fail(`cannot serve ${folder} on 127.0.0.1:${port}: ${(error as Error).message}`)
      }),
      (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    // the port beside the pid: a command run while this process holds the folder connects to it
    fs.writeFileSync(path.join(folder, lockFile), `${process.pid} ${port}\n`)
    yield* Effect.logInfo(`embedded database: ${folder} (PGlite with pgvector), served on 127.0.0.1:${port} to this process`)
    return urlOf(port)
  })

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
export const withEmbeddedDatabases = (env: Env, options: { readonly shareRunning?: boolean } = {}): Effect.Effect<Env, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const variables = [analyticsUrlVariable, relationalUrlVariable].filter((name) => isEmbeddedUrl(env[name]))
    if (variables.length === 0) return env
    const urls = new Map<string, string>()
    const rewritten: Record<string, string | undefined> = { ...env }
    for (const name of variables) {
      const folder = embeddedFolder(env[name]!)
      let url = urls.get(folder)
      if (url === undefined) {
        const owner = options.shareRunning === true ? ownerOf(folder) : undefined
        url = owner?.port !== undefined ? urlOf(owner.port) : yield* startEmbedded(folder)
        urls.set(folder, url)
      }
      rewritten[name] = url
    }
    return rewritten
  })

/** whether `env` names an embedded database */
export const usesEmbeddedDatabase = (env: Env): boolean =>
  isEmbeddedUrl(env[analyticsUrlVariable]) || isEmbeddedUrl(env[relationalUrlVariable])
