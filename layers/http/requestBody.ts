/**
 * Reading request bodies straight from Node, within two bounds: a body may not exceed
 * `max_request_body_bytes` (413), and the bodies being received at once, over every
 * connection, may not exceed `max_request_bytes_in_flight` (503 with Retry-After). A body
 * reserves its declared content-length before a byte is read (a chunked one reserves each chunk
 * as it comes), and gives it back once it has been parsed, or as soon as reading ends any other
 * way: refused, aborted, the client gone. Slow or stalled uploads thus hold a bounded amount of
 * memory, which `request_read_timeout_ms` then frees.
 */
import type { IncomingMessage } from "node:http"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
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

/**
 * The request's body, given to `parse` whole; its bytes count against `budget` until `parse`
 * has returned.
 */
export const readRequestBody = <A, E>(
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number,
  budget: BodyBudget,
  parse: (body: Uint8Array) => Effect.Effect<A, E>
): Effect.Effect<A, E | InvalidRequest | PayloadTooLarge | ServiceUnavailable> =>
  Effect.callback((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage
    const tooLarge = () => new PayloadTooLarge({ message: `the request body exceeds the limit of ${maxBytes} bytes` })
    const length = source.headers["content-length"]
    const declared = length === undefined ? undefined : Number(length)
    if (declared !== undefined && declared > maxBytes) return resume(Effect.fail(tooLarge()))
    if (source.destroyed) return resume(Effect.fail(new InvalidRequest({ message: "the connection closed before the request body was read" })))
    if (declared !== undefined && !budget.take(declared)) return resume(Effect.fail(busy()))
    let held = declared ?? 0
    let received = 0
    let chunks: Array<Buffer> = []
    let settled = false
    const settle = (outcome: Effect.Effect<A, E | InvalidRequest | PayloadTooLarge | ServiceUnavailable> | undefined) => {
      if (settled) return
      settled = true
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onBroken)
      source.off("close", onBroken)
      // unread bytes wait in the socket (the platform drains or closes it after the answer)
      if (!source.readableEnded) source.pause()
      chunks = []
      budget.give(held)
      held = 0
      if (outcome !== undefined) resume(outcome)
    }
    function onData(chunk: Buffer) {
      received += chunk.length
      if (received > maxBytes) return settle(Effect.fail(tooLarge()))
      if (declared === undefined) {
        if (!budget.take(chunk.length)) return settle(Effect.fail(busy()))
        held += chunk.length
      }
      chunks.push(chunk)
    }
    function onEnd() {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)
      chunks = []
      settle(parse(body))
    }
    function onBroken() {
      settle(Effect.fail(new InvalidRequest({ message: "the connection closed before the whole request body arrived" })))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onBroken)
    source.once("close", onBroken)
    sendContinue(request)
    // the request fiber interrupted (the client went away): give the bytes back
    return Effect.sync(() => settle(undefined))
  })
