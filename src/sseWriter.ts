/**
 * Writing Server-Sent Events, the framing of the gateway's streamed answers: one `data:` event
 * per JSON payload (`/inference`'s and the OpenAI surface's, with OpenAI's `[DONE]` end marker)
 * or named events (Anthropic's), a body written a batch at a time, and keeping a quiet stream
 * alive (pings, and a stream committed before its start). Reading a provider's events is
 * src/providers/sse.ts.
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

export const sseEvent = (json: string): string => `data: ${json}\n\n`
export const sseDone = "data: [DONE]\n\n"
/** a named event (`event: <name>`), as Anthropic's Messages and OpenAI's Responses streams frame theirs */
export const sseNamedEvent = (name: string, json: string): string => `event: ${name}\ndata: ${json}\n\n`

const textEncoder = new TextEncoder()

/**
 * The body of a stream whose pulls each bring what one read of the provider brought
 * (src/streams.ts): the events of one pull, as `eventsOf` writes them, are encoded once and
 * sent as one write; a pull whose events are empty sends nothing.
 */
export const sseWrites = <A>(
  items: Stream.Stream<A>,
  eventsOf: (batch: Arr.NonEmptyReadonlyArray<A>) => string
): Stream.Stream<Uint8Array> =>
  Stream.transformPull(items, (pull) => {
    const next: Effect.Effect<readonly [Uint8Array], Cause.Done> = Effect.flatMap(pull, (batch) => {
      const text = eventsOf(batch)
      return text === "" ? next : Effect.succeed([textEncoder.encode(text)] as const)
    })
    return Effect.succeed(next)
  })

/**
 * `body` with `ping` written whenever nothing was for `everyMs`, so that a client or a proxy
 * that drops a quiet connection keeps it while a provider thinks. The body is read by a fiber of
 * its own into a one-place queue, beside a ticker that sleeps until `everyMs` after the last
 * write: a write costs a timestamp and one hand-over, never a timer (measured: ~1.5 µs a write;
 * `Stream.merge`, whose hand-over is two-sided, ~5 µs). Ends with the body.
 */
export const keepAliveWrites = (body: Stream.Stream<Uint8Array>, ping: Uint8Array, everyMs: number): Stream.Stream<Uint8Array> =>
  Stream.unwrap(Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const queue = yield* Queue.bounded<Uint8Array, Cause.Done>(1)
    let lastWrite = clock.currentTimeMillisUnsafe()
    const read = Stream.runForEachArray(body, (writes) => {
      lastWrite = clock.currentTimeMillisUnsafe()
      return Queue.offerAll(queue, writes)
    })
    yield* Effect.forkScoped(Effect.onExit(read, (exit) => Exit.isSuccess(exit) ? Queue.end(queue) : Queue.failCause(queue, exit.cause)))
    const nextPing: Effect.Effect<void> = Effect.suspend(() => {
      const quietMs = clock.currentTimeMillisUnsafe() - lastWrite
      if (quietMs < everyMs) return Effect.andThen(Effect.sleep(everyMs - quietMs), nextPing)
      lastWrite += quietMs
      return Queue.offer(queue, ping)
    })
    yield* Effect.forkScoped(Effect.forever(nextPing))
    return Stream.fromQueue(queue)
  }))

/** a stream's start that came in time (`Started`), or the body of a stream committed before it (`Committed`) */
export type StartOrCommit<A> =
  | { readonly _tag: "Started"; readonly started: A }
  | { readonly _tag: "Committed"; readonly body: Stream.Stream<Uint8Array> }

/**
 * Waits `commitAfterMs` for `start` (a streamed answer's start, which comes with the provider's
 * first chunk). In time, its outcome as it is: the caller answers, a failure with its own status.
 * Late, the answer is committed to a stream: `opening()`, then (`start` going on in the request's
 * scope, so a client hanging up interrupts it) the events `eventsOf` gives, or `failed(error)` as
 * the last event. Either body is quiet while the provider is: the caller adds the pings.
 */
export const startOrCommit = <A, E, R>(
  start: Effect.Effect<A, E, R>,
  commitAfterMs: number,
  committed: {
    readonly opening: () => string
    readonly eventsOf: (started: A) => Stream.Stream<Uint8Array>
    readonly failed: (error: E) => string
  }
): Effect.Effect<StartOrCommit<A>, E, R | Scope.Scope> =>
  Effect.gen(function*() {
    // interruptible whatever the caller's region: the scope's close must stop it
    const fiber = yield* Effect.forkIn(Effect.interruptible(start), yield* Effect.scope)
    const inTime = yield* Effect.timeoutOption(Fiber.await(fiber), commitAfterMs)
    if (Option.isSome(inTime)) {
      const exit = inTime.value
      if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
      return { _tag: "Started", started: exit.value } as const
    }
    const rest = Stream.unwrap(Effect.map(Fiber.await(fiber), (exit): Stream.Stream<Uint8Array> => {
      if (Exit.isSuccess(exit)) return committed.eventsOf(exit.value)
      // a defect or an interruption is not the caller's to write
      const error = Cause.findError(exit.cause)
      return Result.isSuccess(error) ? Stream.succeed(textEncoder.encode(committed.failed(error.success))) : Stream.failCause(error.failure)
    }))
    return { _tag: "Committed", body: Stream.concat(Stream.sync(() => textEncoder.encode(committed.opening())), rest) } as const
  })
