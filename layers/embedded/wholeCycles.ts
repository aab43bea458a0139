/**
 * `db` as pglite-socket's queue sees it, so that an extended-query cycle (Parse ... Sync) of one
 * client runs whole. The queue takes the clients' messages one at a time and, unless a
 * transaction block is open, from whichever client comes next: another client's cycle in the
 * middle of one replaces its unnamed statement and portal or ends its implicit transaction
 * ("portal "" does not exist", or its rows sent to the other client), which any concurrent use
 * of the pools meets. The queue keeps to the client of the last message while
 * `isInTransaction()` holds: saying so from a cycle's first message to its Sync keeps the cycle
 * together. A client gone mid-cycle has its cycle ended (a Sync) before the queue's rollback.
 * Runs in the embedded database's thread (pgliteWorker.ts).
 */

/** the message types of an extended-query cycle before its Sync: Parse, Bind, Describe, Execute, Close, Flush */
const cycleMessages = new Set(["P", "B", "D", "E", "C", "H"].map((letter) => letter.charCodeAt(0)))
const syncMessage = "S".charCodeAt(0)
const queryMessage = "Q".charCodeAt(0)

export const keepingCyclesWhole = <Db extends {
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
