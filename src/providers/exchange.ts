/**
 * One HTTP exchange of a call: the request as built, authorized when the codec says how, sent
 * through the `HttpTransport`, and its reply read by the caller's reader. The transport's and
 * the authorizer's failures become `ProviderFailure`s (or the request's `InvalidRequest`).
 */
import * as Effect from "effect/Effect"
import { InvalidRequest } from "../errors.ts"
import { unsendableCharacter } from "../httpHeaders.ts"
import { type HttpCall, HttpTransport, type TransportError } from "../transport.ts"
import type { Authorizer, WireCodec } from "./codec.ts"
import type { ProviderFailure } from "./failure.ts"
import { failure, transportFailure } from "./upstreamFailures.ts"
import { isHttpCall } from "./wireRequest.ts"

type Transport = HttpTransport["Service"]

/** a request sent for a whole answer */
export const post = (http: Transport, request: HttpCall) => http.post(request)

/** a request sent for a body read as it arrives (a batch's result file) */
export const download = (http: Transport, request: HttpCall) => http.download(request)

/** One call: the request as built, authorized when the codec says how, sent, and its reply read by `read`; the transport's failures mapped. */
export const exchange = <Settings, Target, Event, Reply, A>(
  codec: WireCodec<Settings, Target, Event>,
  authorize: Authorizer | undefined,
  call: { readonly apiKey: string | undefined; readonly qualifiedName: string; readonly credentialFromRequest?: boolean | undefined },
  built: HttpCall | ProviderFailure | InvalidRequest,
  send: (http: Transport, request: HttpCall) => Effect.Effect<Reply, TransportError>,
  read: (
    codec: WireCodec<Settings, Target, Event>,
    reply: Reply,
    request: HttpCall,
    apiKey: string | undefined,
    qualifiedName: string
  ) => Effect.Effect<A, ProviderFailure>
): Effect.Effect<A, ProviderFailure | InvalidRequest, HttpTransport> => {
  if (!isHttpCall(built)) return Effect.fail(built)
  const apiKey = call.apiKey
  // a key the request gave goes into a header (unless an authorizer reads it: a key file): one it cannot carry is the request's fault
  const unsendable = authorize === undefined && call.credentialFromRequest === true && apiKey !== undefined ? unsendableCharacter(apiKey) : undefined
  if (unsendable !== undefined) {
    return Effect.fail(new InvalidRequest({ message: `credentials: the API key given holds ${unsendable}, which an HTTP header cannot carry` }))
  }
  const sendAndRead = (request: HttpCall) =>
    HttpTransport.use((http) => send(http, request)).pipe(
      Effect.mapError((error) => transportFailure(error, apiKey)),
      Effect.flatMap((reply) => read(codec, reply, request, apiKey, call.qualifiedName))
    )
  if (authorize === undefined) return sendAndRead(built)
  return authorize(built, apiKey, call.credentialFromRequest === true).pipe(
    // the request's fault (a credential it gave that the gateway will not use) ends the inference as it is
    Effect.mapError((error) => error instanceof InvalidRequest ? error : failure(error.message, apiKey, error.timedOut)),
    Effect.flatMap(sendAndRead)
  )
}
