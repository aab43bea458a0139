/**
 * The embedded database's own thread (a `worker_threads` Worker, started by pgliteThread.ts):
 * PGlite and pglite-socket's server on `127.0.0.1:<port>`. Whatever PGlite does holds this
 * thread only, never the gateway's event loop: a long query, or the spin PGlite falls into
 * after a PANIC (a WAL write that failed on a full disk aborts its Postgres, and every later
 * query spins for good). The gateway keeps serving, reaches the database over TCP as before,
 * and can end this thread whatever it is doing.
 *
 * Says when it serves, when PGlite could not open the folder, and when PGlite stopped on a
 * PANIC (from PGlite's stderr, at once: the query that met it may not even have answered);
 * closes PGlite cleanly when told to stop.
 */
import { parentPort, workerData } from "node:worker_threads"
import { keepingCyclesWhole } from "./wholeCycles.ts"

export interface WorkerSettings {
  /** PGlite's data folder (`<folder>/pgdata`) */
  readonly dataDir: string
  readonly port: number
}

/** what the thread tells the gateway */
export type FromWorker =
  | { readonly type: "serving" }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "panic"; readonly message: string }
  | { readonly type: "stopped" }

/** what the gateway tells the thread */
export type ToWorker = { readonly type: "stop" }

const port = parentPort!
const tell = (message: FromWorker) => port.postMessage(message)
const { dataDir, port: tcpPort } = workerData as WorkerSettings

/** Postgres' PANIC line, and emscripten's abort that follows it (or comes alone, for a wasm trap) */
const fatal = /\bPANIC:\s|^Aborted\(/

let panicked = false
const onStderr = (text: string): boolean => {
  if (!panicked && fatal.test(text)) {
    panicked = true
    tell({ type: "panic", message: text.replace(/^.*?\bPANIC:\s+/, "").trim() })
  }
  return false
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

try {
  const [{ PGlite }, { vector }, { PGLiteSocketServer }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("@electric-sql/pglite-pgvector"),
    import("@electric-sql/pglite-socket")
  ])
  const db = await PGlite.create({ dataDir, extensions: { vector }, onStderr })
  const server = new PGLiteSocketServer({ db: keepingCyclesWhole(db), host: "127.0.0.1", port: tcpPort, maxConnections: 128 })
  await server.start()
  port.on("message", async (message: ToWorker) => {
    if (message.type !== "stop") return
    await server.stop().catch(() => undefined)
    await db.close().catch(() => undefined)
    tell({ type: "stopped" })
  })
  tell({ type: "serving" })
} catch (error) {
  tell({ type: "failed", message: errorText(error) })
}
