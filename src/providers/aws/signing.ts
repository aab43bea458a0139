/**
 * How an AWS call is authorized, after the request is built (`extra_body` and `extra_headers`
 * applied, so they are signed too): AWS keys (the `sdk` credential, `parseAwsKeys`) sign it with
 * SigV4 (`@smithy/signature-v4`); any other credential text is a Bedrock API key, sent as
 * `Authorization: Bearer <key>` (`AWS_BEARER_TOKEN_BEDROCK`, or a configured `api_key_location`).
 */
import { Hash } from "@smithy/hash-node"
import { SignatureV4 } from "@smithy/signature-v4"
import * as Effect from "effect/Effect"
import { parseAwsKeys } from "../../config/credentials.ts"
import type { HttpCall } from "../../transport.ts"
import type { Authorizer } from "../codec.ts"
import { ProviderFailure } from "../failure.ts"

export interface SigningScope {
  /** the provider type, for messages */
  readonly type: string
  /** `bedrock` or `sagemaker` */
  readonly service: string
  /** undefined: the call fails before it is signed (the request body says why) */
  readonly region: string | undefined
  /** Bedrock takes API keys as bearer tokens; SageMaker does not */
  readonly bearer: boolean
}

/** SHA-256 as the signer wants it: a constructor taking an optional HMAC key (Node's crypto, through @smithy/hash-node) */
class Sha256 extends Hash {
  constructor(secret?: ConstructorParameters<typeof Hash>[1]) {
    super("sha256", secret)
  }
}

const refused = (message: string) => Effect.fail(new ProviderFailure({ message, timedOut: false }))

/** The headers with lower-case names (the signer and the wire must see one spelling of each). */
const lowerCased = (headers: Readonly<Record<string, string>>): Record<string, string> => {
  const lower: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value
  return lower
}

/**
 * SigV4 over the request as it will be sent: method, path, query, the headers (the `host` the
 * client will send from the URL, `content-type`, `x-amz-date`, `x-amz-security-token` with a
 * session token, whatever `extra_headers` added) and the body.
 */
export const signRequest = async (
  request: HttpCall,
  keys: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string | undefined },
  scope: { readonly service: string; readonly region: string },
  signingDate?: Date
): Promise<HttpCall> => {
  const url = new URL(request.url)
  const signer = new SignatureV4({
    credentials: keys,
    region: scope.region,
    service: scope.service,
    sha256: Sha256
  })
  const headers = lowerCased(request.headers)
  const query: Record<string, string> = {}
  for (const [name, value] of url.searchParams) query[name] = value
  const signed = await signer.sign({
    method: "POST",
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port === "" ? undefined : Number(url.port),
    path: url.pathname,
    query,
    headers: { ...headers, host: url.host },
    body: request.body
  }, signingDate === undefined ? {} : { signingDate })
  // `host` is signed and sent by the HTTP client from the URL, with the same value
  const { host: _host, ...sent } = signed.headers
  return { url: request.url, headers: sent, body: request.body }
}

export const awsAuthorizer = (scope: SigningScope): Authorizer => (request, credential) => {
  if (credential === undefined) {
    return refused(`the ${scope.type} provider has no credential: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure api_key_location`)
  }
  const keys = parseAwsKeys(credential)
  if (keys === undefined) {
    if (!scope.bearer) {
      return refused(
        `the ${scope.type} provider signs its calls with AWS access keys (SigV4) and does not take a bearer token: use api_key_location = "sdk" with AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY`
      )
    }
    return Effect.succeed({ ...request, headers: { ...lowerCased(request.headers), authorization: `Bearer ${credential}` } })
  }
  const region = scope.region
  if (region === undefined) return refused(`the ${scope.type} provider has no region: set region (or AWS_REGION)`)
  return Effect.tryPromise({
    try: () => signRequest(request, keys, { service: scope.service, region }),
    catch: (error) =>
      new ProviderFailure({
        message: `the ${scope.type} provider could not sign its request: ${error instanceof Error ? error.message : String(error)}`,
        timedOut: false
      })
  })
}
