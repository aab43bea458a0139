/**
 * The HTTP request of one call: the codec's body, built with the call's `provider_tools`, with
 * the `extra_body` edits applied to it, and the codec's headers with the `extra_headers` edits.
 */
import { InvalidRequest } from "../errors.ts"
import { applyExtraBodyEdit, applyExtraHeaderEdits, requestFieldOf } from "../inference/extraBody.ts"
import type { HttpCall } from "../transport.ts"
import type { ModelRequest } from "../inference/types.ts"
import { type CallerContext, type WireBody, type WireCall, type WireCodec, WireProblem } from "./codec.ts"
import { ProviderFailure } from "./failure.ts"
import { redactSecrets } from "./redact.ts"
import type { ProviderCall } from "./types.ts"
import { failure } from "./upstreamFailures.ts"

const noProviderTools: ReadonlyArray<unknown> = []

/** The provider's configured `provider_tools`, then the request's meant for this call's model and provider (all, when unscoped). */
export const providerToolsFor = (call: ProviderCall): ReadonlyArray<unknown> => {
  const configured = call.providerTools ?? noProviderTools
  const all = call.request.providerTools
  if (all.length === 0) return configured
  const tools: Array<unknown> = [...configured]
  for (const providerTool of all) {
    if (providerTool.modelName !== undefined && providerTool.modelName !== call.modelName) continue
    if (providerTool.providerName !== undefined && providerTool.providerName !== call.providerName) continue
    if (providerTool.family !== undefined && providerTool.family !== (call.family ?? "other")) continue
    tools.push(providerTool.tool)
  }
  return tools
}

/** A built-in tool of another provider family that the request would rather see refused than dropped, or undefined. */
const refusedBuiltinTool = (call: ProviderCall): ProviderFailure | undefined => {
  for (const providerTool of call.request.providerTools) {
    if (providerTool.refuseElsewhere !== true || providerTool.family === (call.family ?? "other")) continue
    return new ProviderFailure({
      message: `provider "${call.providerName}" cannot run the built-in tool ${providerTool.label ?? "given"} (only providers of the ${providerTool.family} family can)`,
      timedOut: false,
      unsupported: true
    })
  }
  return undefined
}

/** A request made (`editedRequest`), not the failure of making it. */
export const isHttpCall = (value: HttpCall | ProviderFailure | InvalidRequest): value is HttpCall =>
  !(value instanceof ProviderFailure || value instanceof InvalidRequest)

/**
 * The HTTP request of one call: the codec's body with the `extra_body` edits applied, its
 * headers with the `extra_headers` edits. An edit that cannot be applied fails the call: a
 * configured one as a failure of this provider, a request's own as an InvalidRequest that ends
 * the inference (the caller asked for a body that cannot be made).
 */
export const wireRequest = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  target: Target,
  call: ProviderCall,
  stream: boolean
): HttpCall | ProviderFailure | InvalidRequest => builtRequest(codec, target, call, stream, codec.url(target, stream), codec.body)

/** As `wireRequest`, for a body another builder makes (a hook's: token counting) and sends to `url`. */
export const builtRequest = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  target: Target,
  call: ProviderCall,
  stream: boolean,
  url: string,
  build: (request: ModelRequest, call: WireCall<Target>) => WireBody | WireProblem
): HttpCall | ProviderFailure | InvalidRequest => {
  const caller = call.caller ?? noCaller
  const refused = call.request.providerTools.length === 0 ? undefined : refusedBuiltinTool(call)
  if (refused !== undefined) return refused
  const body = build(call.request, {
    target,
    stream,
    qualifiedName: call.qualifiedName,
    providerTools: providerToolsFor(call),
    caller
  })
  if (body instanceof WireProblem) return new ProviderFailure({ message: redactSecrets(body.message, call.apiKey), timedOut: false, unsupported: true })
  return editedRequest(url, codec.headers(target, call.apiKey), body, ownEditsOf(codec, call, caller))
}

/** The caller context of a call that has none. */
export const noCaller: CallerContext = { tags: {}, dryrun: false, credentials: {}, extraBody: [], extraHeaders: [] }

/**
 * The call with only the edits its own request takes: all of them, but for a codec that
 * forwards the caller's (`forwardsCallerEdits`), only the provider table's. A call's edits are
 * the provider's followed by the caller's (`providerCall` in `inference/providerCall.ts`), so
 * the provider's are a prefix.
 */
export const ownEditsOf = <C extends ProviderCall<unknown>, Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  call: C,
  caller: CallerContext
): C => {
  if (codec.forwardsCallerEdits !== true || (caller.extraBody.length === 0 && caller.extraHeaders.length === 0)) return call
  return {
    ...call,
    extraBody: call.extraBody.slice(0, call.extraBody.length - caller.extraBody.length),
    extraHeaders: call.extraHeaders.slice(0, call.extraHeaders.length - caller.extraHeaders.length)
  }
}

/** A call's URL, headers and body with its `extra_body` and `extra_headers` edits applied (see `wireRequest`). */
export const editedRequest = (
  url: string,
  headers: Record<string, string>,
  body: WireBody,
  call: ProviderCall<unknown>
): HttpCall | ProviderFailure | InvalidRequest => {
  for (const edit of call.extraBody) {
    const problem = applyExtraBodyEdit(body, edit)
    if (problem !== undefined) {
      const field = requestFieldOf(edit)
      return field === undefined ? failure(problem, call.apiKey) : new InvalidRequest({ message: `${field}.pointer: ${problem}` })
    }
  }
  return { url, headers: applyExtraHeaderEdits(headers, call.extraHeaders), body: JSON.stringify(body) }
}
