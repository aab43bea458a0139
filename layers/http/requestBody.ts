/**
 * Reading request bodies straight from Node, within two bounds: a body may not exceed
 * `max_request_body_bytes` (413), and the bodies being received at once, over every
 * connection, may not exceed `max_request_bytes_in_flight` (503 with Retry-After). A body
 * reserves its declared content-length before a byte is read (a chunked one reserves each chunk
 * as it comes), and gives it back once it has been parsed, or as soon as reading ends any other
 * way: refused, aborted, the client gone. Slow or stalled uploads thus hold a bounded amount of
 * memory, which `request_read_timeout_ms` then frees.
 *
 * A body is parsed in the turn of the event loop its last bytes arrive in; large ones (from
 * `largeBodyBytes`) in a turn of their own, one at a time, so that several arriving at once do
 * not add their parses up into one long stall. A dataset import streams its body instead
 * (`requestBodyStream`): its lines are checked as they arrive.
 */
import type { IncomingMessage } from "node:http"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as Arr from "effect/Array"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { InvalidRequest, PayloadTooLarge, ServiceUnavailable } from "../../src/errors.ts"

/** The bytes of request bodies being received, against a limit. */
export interface BodyBudget {
  /** takes `bytes` when they fit under the limit (and says true), else takes nothing */
  readonly take: (bytes: number) => boolean
  readonly give: (bytes: number) => void
}

export const makeBodyBudget = (limit: number): BodyBudget => {
  let inUse = 0
  return {
    take: (bytes) => {
      if (inUse + bytes > limit) return false
      inUse += bytes
      return true
    },
    give: (bytes) => {
      inUse -= bytes
    }
  }
}

/** the server's budget (`ServerLive` provides it); unlimited elsewhere */
export const RequestBodyBudget = Context.Reference<BodyBudget>("gateway/RequestBodyBudget", {
  defaultValue: () => makeBodyBudget(Number.POSITIVE_INFINITY)
})

/** how long a client refused for want of budget is asked to wait */
export const busyRetryAfterS = 1

const busy = () =>
  new ServiceUnavailable({
    message: "the gateway is receiving too many request bodies at once (max_request_bytes_in_flight); retry shortly",
    retryAfterS: busyRetryAfterS
  })

/** the platform's adapter sends `100 Continue` to a client that waits for it before sending the body */
const sendContinue = (request: HttpServerRequest.HttpServerRequest) =>
  (request as unknown as { writeContinue?: () => void }).writeContinue?.()

/** bodies from this size up are parsed in a turn of the event loop of their own (a plain inference is a few KiB) */
export const largeBodyBytes = 64 * 1024

const largeParses: Array<() => void> = []

/** the first waiting parse, and the next one in the next turn (an immediate queued by an immediate runs after the I/O between) */
const parseNextLarge = () => {
  try {
    largeParses.shift()!()
  } finally {
    if (largeParses.length > 0) setImmediate(parseNextLarge)
  }
}

/** runs `parse` in a turn of the event loop where no other large body is parsed */
const inTurnOfItsOwn = (parse: () => void) => {
  largeParses.push(parse)
  if (largeParses.length === 1) setImmediate(parseNextLarge)
}

type BodyFailure = InvalidRequest | PayloadTooLarge | ServiceUnavailable

const tooLarge = (maxBytes: number) => new PayloadTooLarge({ message: `the request body exceeds the limit of ${maxBytes} bytes` })

const closedEarly = () => new InvalidRequest({ message: "the connection closed before the whole request body arrived" })

/** What a body being read holds: the bytes received, against `maxBytes`, and those taken from the budget. */
interface BodyMeter {
  readonly received: () => number
  /** counts `chunk`: the refusal when it takes the body past its limit or the budget */
  readonly count: (chunk: Buffer) => BodyFailure | undefined
  /** gives back what the body took from the budget */
  readonly release: () => void
}

/**
 * The meter of a body about to be read, its declared length taken from the budget up front (a
 * body of undeclared length takes each chunk as it comes); or a refusal before anything is read:
 * too large, the budget short, or the connection already gone.
 */
const admitted = (source: IncomingMessage, maxBytes: number, budget: BodyBudget): BodyMeter | BodyFailure => {
  const length = source.headers["content-length"]
  const declared = length === undefined ? undefined : Number(length)
  if (declared !== undefined && declared > maxBytes) return tooLarge(maxBytes)
  if (source.destroyed) return new InvalidRequest({ message: "the connection closed before the request body was read" })
  if (declared !== undefined && !budget.take(declared)) return busy()
  let held = declared ?? 0
  let received = 0
  return {
    received: () => received,
    count: (chunk) => {
      received += chunk.length
      if (received > maxBytes) return tooLarge(maxBytes)
      if (declared === undefined) {
        if (!budget.take(chunk.length)) return busy()
        held += chunk.length
      }
      return undefined
    },
    release: () => {
      budget.give(held)
      held = 0
    }
  }
}

/**
 * Listens to the body's events; the function returned stops listening and pauses the source
 * (unread bytes wait in the socket: the platform drains or closes it after the answer).
 */
const listen = (
  source: IncomingMessage,
  on: { readonly data: (chunk: Buffer) => void; readonly end: () => void; readonly broken: () => void }
): (() => void) => {
  source.on("data", on.data)
  source.once("end", on.end)
  source.once("error", on.broken)
  source.once("close", on.broken)
  return () => {
    source.off("data", on.data)
    source.off("end", on.end)
    source.off("error", on.broken)
    source.off("close", on.broken)
    if (!source.readableEnded) source.pause()
  }
}

/**
 * The request's body, given to `parse` whole; its bytes count against `budget` until `parse`
 * has returned.
 */
export const readRequestBody = <A, E>(
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number,
  budget: BodyBudget,
  parse: (body: Uint8Array) => Effect.Effect<A, E>
): Effect.Effect<A, E | BodyFailure> =>
  Effect.callback((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
    const meter = admitted(source, maxBytes, budget)
    if (!("count" in meter)) return resume(Effect.fail(meter))
    let chunks: Array<Buffer> = []
    let settled = false
    const stopReading = () => {
      stopListening()
      chunks = []
    }
    const settle = (outcome: Effect.Effect<A, E | BodyFailure> | undefined) => {
      if (settled) return
      settled = true
      stopReading()
      meter.release()
      if (outcome !== undefined) resume(outcome)
    }
    const stopListening = listen(source, {
      data: (chunk) => {
        const refused = meter.count(chunk)
        if (refused !== undefined) return settle(Effect.fail(refused))
        chunks.push(chunk)
      },
      end: () => {
        const received = meter.received()
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)
        stopReading()
        if (received < largeBodyBytes) return settle(parse(body))
        // unless the request ended meanwhile (the client gone: the fiber interrupted)
        inTurnOfItsOwn(() => settled || settle(parse(body)))
      },
      broken: () => settle(Effect.fail(closedEarly()))
    })
    sendContinue(request)
    // the request fiber interrupted (the client went away): give the bytes back
    return Effect.sync(() => settle(undefined))
  })

/** what a streamed body reads ahead of its consumer at most (the upload waits beyond it) */
const readAheadBytes = 1024 * 1024

/**
 * The request's body as a stream of its chunks, within the same bounds as `readRequestBody`
 * (413 past `maxBytes`, 503 past the budget), read as the stream is consumed: at most
 * `readAheadBytes` ahead of the consumer, the rest of the upload waiting in the socket. The
 * bytes received count against `budget` until the scope closes, since the consumer holds what it
 * made of them until it is done. Reading starts at the first pull; the stream can be run once.
 */
export const requestBodyStream = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number,
  budget: BodyBudget
): Effect.Effect<Stream.Stream<Uint8Array, BodyFailure>, BodyFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const source = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
    const meter = admitted(source, maxBytes, budget)
    if (!("count" in meter)) return yield* Effect.fail(meter)
    let ahead: Array<Uint8Array> = []
    let aheadBytes = 0
    let reading = false
    let ended = false
    let failure: BodyFailure | undefined
    /** the pull waiting for the next chunk, the end or a failure */
    let waiting: (() => void) | undefined
    const wake = () => {
      const waiter = waiting
      waiting = undefined
      waiter?.()
    }
    /** set once reading starts (at the first pull) */
    let stopReading = () => {}
    const refuse = (error: BodyFailure) => {
      failure = error
      stopReading()
      wake()
    }
    const on = {
      data: (chunk: Buffer) => {
        const refused = meter.count(chunk)
        if (refused !== undefined) return refuse(refused)
        ahead.push(chunk)
        aheadBytes += chunk.length
        if (aheadBytes >= readAheadBytes) source.pause()
        wake()
      },
      end: () => {
        ended = true
        stopReading()
        wake()
      },
      broken: () => refuse(closedEarly())
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopReading()
        ahead = []
        meter.release()
      })
    )
    const pull: Effect.Effect<Arr.NonEmptyReadonlyArray<Uint8Array>, BodyFailure | Cause.Done> = Effect.suspend(() => {
      if (failure !== undefined) return Effect.fail(failure)
      if (ahead.length > 0) {
        const chunks = ahead as Arr.NonEmptyArray<Uint8Array>
        ahead = []
        aheadBytes = 0
        if (!ended) source.resume()
        return Effect.succeed(chunks)
      }
      if (ended || source.readableEnded) return Cause.done()
      if (!reading) {
        reading = true
        stopReading = listen(source, on)
        sendContinue(request)
      }
      return Effect.callback<void>((resume) => {
        waiting = () => resume(Effect.void)
        return Effect.sync(() => {
          waiting = undefined
        })
      }).pipe(Effect.andThen(pull))
    })
    return Stream.fromPull(Effect.succeed(pull))
  })
