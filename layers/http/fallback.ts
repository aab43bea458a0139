/**
 * The fallback: whatever no route takes gets a 404, or a 405 on a known path called with
 * another method, in OpenAI's shape under `<base>/openai/`.
 */
import { maxHeaderSize } from "node:http"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { GatewayApi } from "../../src/contract/gateway.ts"
import { MethodNotAllowed, NotFound } from "../../src/errors.ts"
import { openAiErrorResponse } from "./openaiCompatible.ts"
import { errorResponse } from "./respond.ts"

/**
 * The longest value of a path parameter the router matches (find-my-way's default is 100): the
 * longest request head Node accepts, so that every parameter a request can carry reaches its
 * handler, and a dataset name of any length gets the 400 saying why it is not a name (a longer
 * parameter would fall through to a 404 `no route`).
 */
export const maxPathParamLength = maxHeaderSize

const decodedLength = (segment: string): number => {
  try {
    return decodeURIComponent(segment).length
  } catch {
    return segment.length
  }
}

/** the routes of `api` as `base` serves them: the methods of a request path, undefined for an unknown one */
const methodsByPath = (api: GatewayApi, base: string): (path: string) => ReadonlyArray<string> | undefined => {
  const methods = new Map<string, Array<string>>()
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const path = `${base}${endpoint.path}`
      methods.set(path, [...(methods.get(path) ?? []), endpoint.method])
    }
  }
  // a path with parameters (`/v1/datasets/:dataset_name`) matches segment by segment, as the router does
  const patterns = [...methods].filter(([path]) => path.includes("/:")).map(([path, allowed]) => ({ segments: path.split("/"), allowed }))
  const matches = (segments: ReadonlyArray<string>, requested: ReadonlyArray<string>) =>
    segments.length === requested.length && segments.every((segment, i) =>
      segment.startsWith(":")
        ? requested[i] !== "" && decodedLength(requested[i]) <= maxPathParamLength
        : segment === requested[i]
    )
  return (path) => {
    const exact = methods.get(path)
    if (exact !== undefined) return exact
    const requested = path.split("/")
    return patterns.find(({ segments }) => matches(segments, requested))?.allowed
  }
}

/** Whatever no route takes: a 404, or a 405 on a known path; in OpenAI's shape under `<base>/openai/`. */
export const Unmatched = (api: GatewayApi, base: string) => {
  const methodsOf = methodsByPath(api, base)
  const openAiPrefix = `${base}/openai/`
  return HttpRouter.add("*", "*", (request: HttpServerRequest.HttpServerRequest) => {
    const path = request.url.split("?")[0]
    const methods = methodsOf(path)
    const error = methods === undefined
      ? new NotFound({ message: `no route for ${request.method} ${path}` })
      : new MethodNotAllowed({ message: `${path} accepts ${methods.join(", ")}, not ${request.method}` })
    return Effect.succeed<HttpServerResponse.HttpServerResponse>(
      path.startsWith(openAiPrefix) ? openAiErrorResponse(error) : errorResponse(error)
    )
  })
}
