/**
 * Settlements sent together (docs/budgets.md "The cost per request"): the calls of one process
 * that end within `windowMs` of each other are settled by one store call, their deltas summed
 * per counter, instead of one round trip each. Reservations are not batched: each is checked
 * against the limit before its call, on its own.
 *
 * Delaying a settlement by the window keeps the bound: a counter holds a call's estimate a few
 * milliseconds longer (more conservative while the estimate is above the cost, the usual case).
 * Each settlement still answers its spend before and after, as if it had been sent alone
 * (the batch's before plus the deltas queued ahead of it), so the threshold log lines keep
 * firing once. The queue is flushed when the scope closes, so a drained gateway settles what
 * it charged.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { StoreError } from "../storeError.ts"
import type { BudgetCounters, CounterSettlement } from "./store.ts"

type Settled = ReadonlyArray<{ readonly before: number; readonly after: number }>

interface Waiting {
  readonly settlements: ReadonlyArray<CounterSettlement>
  readonly resolve: (settled: Settled) => void
  readonly reject: (error: StoreError) => void
}

/** `counters` whose `settle` waits up to `windowMs` for others to go with it */
export const withBatchedSettlements = (counters: BudgetCounters, windowMs: number): Effect.Effect<BudgetCounters, never, Scope.Scope> =>
  Effect.gen(function*() {
    let queue: Array<Waiting> = []
    let timer: ReturnType<typeof setTimeout> | undefined

    const flush = (): Promise<void> => {
      timer = undefined
      const batch = queue
      queue = []
      if (batch.length === 0) return Promise.resolve()
      // one settlement per counter: the sum of the batch's deltas
      const merged = new Map<string, CounterSettlement>()
      for (const waiting of batch) {
        for (const settlement of waiting.settlements) {
          const id = `${settlement.period}\u0000${settlement.key}`
          const known = merged.get(id)
          merged.set(id, known === undefined ? settlement : { ...known, delta: known.delta + settlement.delta })
        }
      }
      const ids = [...merged.keys()]
      return Effect.runPromise(Effect.result(counters.settle([...merged.values()]))).then((result) => {
        if (result._tag === "Failure") {
          for (const waiting of batch) waiting.reject(result.failure)
          return
        }
        // each answers as if sent alone: the counter's level before it is the batch's before plus the deltas ahead of it
        const levels = new Map(ids.map((id, i) => [id, result.success[i].before]))
        for (const waiting of batch) {
          waiting.resolve(waiting.settlements.map((settlement) => {
            const id = `${settlement.period}\u0000${settlement.key}`
            const before = levels.get(id) ?? 0
            const after = Math.max(0, before + settlement.delta)
            levels.set(id, after)
            return { before, after }
          }))
        }
      })
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        if (timer !== undefined) clearTimeout(timer)
        return flush()
      })
    )

    const settle: BudgetCounters["settle"] = (settlements) =>
      settlements.length === 0 ? Effect.succeed([]) : Effect.callback<Settled, StoreError>((resume) => {
        queue.push({ settlements, resolve: (settled) => resume(Effect.succeed(settled)), reject: (error) => resume(Effect.fail(error)) })
        timer ??= setTimeout(flush, windowMs)
      })

    return { ...counters, settle }
  })
