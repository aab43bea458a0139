/**
 * Long pieces of CPU work (a batch of 50,000 inputs prepared, its results made into rows) are
 * cut into slices with a turn of the event loop between them, so that the requests in flight
 * meanwhile are served: `letIoRun` waits for one `setImmediate`, after pending I/O callbacks.
 * (Effect's `yieldNow` lets other fibers run but may not reach the I/O phase.)
 */
import * as Effect from "effect/Effect"

export const letIoRun: Effect.Effect<void> = Effect.callback<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

/** the same, for code that runs as a Promise (a database driver's call) */
export const ioTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** `items` mapped by `f` a slice at a time, with a turn of the event loop between slices */
export const mapInTurns = async <A, B>(items: ReadonlyArray<A>, f: (item: A) => B): Promise<Array<B>> => {
  const out: Array<B> = []
  for (let index = 0; index < items.length; index++) {
    if (index > 0 && index % itemsPerTurn === 0) await ioTurn()
    out.push(f(items[index]))
  }
  return out
}

/** how many items of a long loop run between two turns of the event loop (a few milliseconds of work) */
export const itemsPerTurn = 500
