/**
 * `aws_sagemaker`: a SageMaker endpoint whose container speaks OpenAI's Chat Completions (an
 * OpenAI-compatible server, or TGI's Messages API), behind InvokeEndpoint and
 * InvokeEndpointWithResponseStream, signed with SigV4. The body and the answers are the
 * container's, read as OpenAI's (`openai/`); the stream is the container's SSE inside AWS's
 * event stream (`sagemakerFraming.ts`).
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpoint.html
 */
import * as Schema from "effect/Schema"
import { paramFieldsOf } from "../chatCompletionsFamily.ts"
import { type WireCodec, WireProblem } from "../codec.ts"
import { chatCompletionsBody, type ChatCompletionsTarget } from "../openai/request.ts"
import { errorMessageOf, makeOpenAiChunkParser, parseOpenAiResponse } from "../openai/response.ts"
import { wireProvider } from "../wireProvider.ts"
import { awsErrorMessage } from "./converseResponse.ts"
import { awsRegion, BaseUrl, namedString, sageMakerEndpoint } from "../urls.ts"
import { addressProblem, endpointOf, noRegion, regionOf } from "./region.ts"
import { type SageMakerEvent, sageMakerStream, StreamException } from "./sagemakerFraming.ts"
import { awsAuthorizer } from "./signing.ts"

const type = "aws_sagemaker"

const SageMakerSettings = Schema.Struct({
  endpoint_name: namedString(sageMakerEndpoint),
  /** what the container speaks: both take OpenAI's Chat Completions body */
  hosted_provider: Schema.Literals(["openai", "tgi"]),
  region: Schema.optional(namedString(awsRegion)),
  /** the runtime endpoint, for proxies and tests (`https://runtime.sagemaker.<region>.amazonaws.com` otherwise) */
  endpoint_url: Schema.optional(BaseUrl)
})

interface SageMakerTarget {
  readonly endpointName: string
  readonly region: string | undefined
  readonly endpoint: string | undefined
  readonly chat: ChatCompletionsTarget
}

const paramFields = paramFieldsOf()

const urlOf = (target: { readonly endpoint: string | undefined; readonly endpointName: string }, stream: boolean) =>
  `${target.endpoint ?? "https://runtime.sagemaker.invalid"}/endpoints/${encodeURIComponent(target.endpointName)}/${
    stream ? "invocations-response-stream" : "invocations"
  }`

/** SageMaker's own errors say `message`/`Message`; a container's error (ModelError) carries its body in `OriginalMessage`. */
const sageMakerErrorMessage = (body: string): string | undefined => {
  const own = awsErrorMessage(body)
  if (own !== undefined) return own
  return errorMessageOf(body)
}

/** A container's error comes as a 424 ModelError: the status it stands for is the container's (`OriginalStatusCode`). */
const sageMakerErrorStatus = (status: number, body: string): number => {
  if (status !== 424) return status
  try {
    const original = JSON.parse(body)?.OriginalStatusCode
    return Number.isInteger(original) && original >= 400 && original < 600 ? original : status
  } catch {
    return status
  }
}

export const sageMakerCodec: WireCodec<typeof SageMakerSettings.Type, SageMakerTarget, SageMakerEvent> = {
  type,
  settings: SageMakerSettings,
  defaultCredential: { kind: "sdk" },
  requiresModelName: false,
  target: (settings, model, env) => {
    const region = regionOf(settings.region, env)
    const where = {
      endpointName: settings.endpoint_name,
      region,
      endpoint: endpointOf("runtime.sagemaker", region, settings.endpoint_url)
    }
    return {
      ...where,
      chat: {
        url: urlOf(where, false),
        // TGI ignores the model; an OpenAI-compatible container may route by it
        model: model === "" ? settings.hosted_provider : model,
        paramFields,
        paramDefaults: undefined,
        // TGI's Messages API does not take stream_options
        streamUsage: settings.hosted_provider === "openai"
      }
    }
  },
  targetProblem: (target) =>
    addressProblem(type, target, { setting: "endpoint_name", segments: ["endpoints", encodeURIComponent(target.endpointName), "invocations"] }),
  url: urlOf,
  headers: () => ({ "content-type": "application/json" }),
  authorizer: (target) => awsAuthorizer({ type, service: "sagemaker", region: target.region, bearer: false }),
  body: (request, call) =>
    call.target.endpoint === undefined
      ? new WireProblem(addressProblem(type, call.target, { setting: "endpoint_name", segments: [] }) ?? noRegion(type))
      : chatCompletionsBody(request, { ...call, target: call.target.chat }),
  parseResponse: (text) => parseOpenAiResponse(text),
  framing: sageMakerStream,
  streamParser: () => {
    const parse = makeOpenAiChunkParser()
    return (event) =>
      event instanceof StreamException ? new WireProblem(`the ${type} provider streamed an error: ${event.message}`) : parse(event)
  },
  errorMessage: sageMakerErrorMessage,
  errorStatus: sageMakerErrorStatus
}

export const sageMakerProvider = wireProvider(sageMakerCodec)
