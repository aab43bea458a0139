/**
 * `aws_bedrock`: Bedrock's Converse and ConverseStream APIs, signed with SigV4 (or a Bedrock API
 * key as a bearer token), streamed in AWS's event-stream framing; CountTokens for token counts
 * (`countTokens.ts`).
 */
import * as Schema from "effect/Schema"
import type { WireCodec } from "../codec.ts"
import { wireProvider } from "../wireProvider.ts"
import { bedrockCountTokens } from "./countTokens.ts"
import { converseBody, type ConverseTarget, converseUrl } from "./converseRequest.ts"
import { awsErrorMessage, makeConverseStreamParser, parseConverseResponse } from "./converseResponse.ts"
import { type AwsEvent, awsEventStream } from "./eventStream.ts"
import { BaseUrl, awsRegion, namedString } from "../urls.ts"
import { addressProblem, endpointOf, regionOf } from "./region.ts"
import { awsAuthorizer } from "./signing.ts"

const BedrockSettings = Schema.Struct({
  /** a model id, an inference profile (`us.anthropic...`) or an ARN */
  model_id: Schema.String,
  region: Schema.optional(namedString(awsRegion)),
  /** the runtime endpoint, for proxies and tests (`https://bedrock-runtime.<region>.amazonaws.com` otherwise) */
  endpoint_url: Schema.optional(BaseUrl)
})

export const bedrockCodec: WireCodec<typeof BedrockSettings.Type, ConverseTarget, AwsEvent> = {
  type: "aws_bedrock",
  settings: BedrockSettings,
  defaultCredential: { kind: "sdk" },
  requiresModelName: false,
  target: (settings, _model, env) => {
    const region = regionOf(settings.region, env)
    return { modelId: settings.model_id, region, endpoint: endpointOf("bedrock-runtime", region, settings.endpoint_url) }
  },
  targetProblem: (target) =>
    addressProblem("aws_bedrock", target, { setting: "model_id", segments: ["model", encodeURIComponent(target.modelId), "converse"] }),
  url: converseUrl,
  headers: () => ({ "content-type": "application/json" }),
  authorizer: (target) => awsAuthorizer({ type: "aws_bedrock", service: "bedrock", region: target.region, bearer: true }),
  body: converseBody,
  parseResponse: parseConverseResponse,
  framing: awsEventStream,
  streamParser: makeConverseStreamParser,
  errorMessage: awsErrorMessage,
  countTokens: bedrockCountTokens
}

export const bedrockProvider = wireProvider(bedrockCodec)
