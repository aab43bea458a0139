/**
 * How AWS calls are authorized (`src/providers/aws/signing.ts`): SigV4 over the request as it
 * is sent, session tokens, Bedrock API keys as bearer tokens, and the refusals.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { awsKeysCredential } from "../../src/config/credentials.ts"
import { awsAuthorizer, signRequest } from "../../src/providers/aws/signing.ts"
import type { HttpCall } from "../../src/transport.ts"

const request: HttpCall = {
  url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse",
  headers: { "content-type": "application/json", "X-Extra": "yes" },
  body: `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`
}
const keys = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" }
const date = new Date(Date.UTC(2025, 0, 15, 12, 30, 0))
const scope = { service: "bedrock", region: "us-east-1" }

const signatureOf = (call: HttpCall) => /Signature=([0-9a-f]{64})$/.exec(call.headers.authorization)?.[1]

const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.runPromise(Effect.result(effect as Effect.Effect<A, E>))

describe("SigV4 signing", () => {
  it("signs host, content-type, the date, the payload hash and every other header, for the service and region", async () => {
    const signed = await signRequest(request, keys, scope, date)
    expect(signed.url).toBe(request.url)
    expect(signed.body).toBe(request.body)
    expect(signed.headers["x-amz-date"]).toBe("20250115T123000Z")
    expect(signed.headers["x-amz-content-sha256"]).toMatch(/^[0-9a-f]{64}$/)
    expect(signed.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20250115\/us-east-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-extra, Signature=[0-9a-f]{64}$/
    )
    // the HTTP client sends `host` from the URL
    expect(signed.headers.host).toBeUndefined()
  })

  it("is deterministic, and changes with the body, a header, the path, the secret and the region", async () => {
    const base = signatureOf(await signRequest(request, keys, scope, date))
    expect(signatureOf(await signRequest(request, keys, scope, date))).toBe(base)
    const variants = [
      await signRequest({ ...request, body: request.body.replace("hi", "ho") }, keys, scope, date),
      await signRequest({ ...request, headers: { ...request.headers, "X-Extra": "no" } }, keys, scope, date),
      await signRequest({ ...request, url: request.url.replace("converse", "converse-stream") }, keys, scope, date),
      await signRequest(request, { ...keys, secretAccessKey: "other" }, scope, date),
      await signRequest(request, keys, { ...scope, region: "eu-west-1" }, date)
    ]
    for (const variant of variants) expect(signatureOf(variant)).not.toBe(base)
  })

  it("sends and signs a session token", async () => {
    const signed = await signRequest(request, { ...keys, sessionToken: "session/token+1" }, scope, date)
    expect(signed.headers["x-amz-security-token"]).toBe("session/token+1")
    expect(signed.headers.authorization).toContain("x-amz-security-token")
  })
})

describe("the AWS authorizer", () => {
  const bedrock = awsAuthorizer({ type: "aws_bedrock", service: "bedrock", region: "us-east-1", bearer: true })
  const sagemaker = awsAuthorizer({ type: "aws_sagemaker", service: "sagemaker", region: "us-east-1", bearer: false })

  it("signs with the AWS keys of an sdk credential", async () => {
    const result = await run(bedrock(request, awsKeysCredential(keys)))
    if (Result.isFailure(result)) throw new Error(result.failure.message)
    expect(result.success.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request/)
  })

  it("sends any other credential to Bedrock as a bearer token, unsigned", async () => {
    const result = await run(bedrock(request, "ABSK-bedrock-api-key"))
    if (Result.isFailure(result)) throw new Error(result.failure.message)
    expect(result.success.headers.authorization).toBe("Bearer ABSK-bedrock-api-key")
    expect(result.success.headers["x-amz-date"]).toBeUndefined()
  })

  it("refuses a bearer token for SageMaker, naming the provider type", async () => {
    const result = await run(sagemaker(request, "ABSK-bedrock-api-key"))
    expect(Result.isFailure(result) && result.failure.message).toContain("the aws_sagemaker provider signs its calls with AWS access keys")
  })

  it("refuses to sign without a region", async () => {
    const noRegion = awsAuthorizer({ type: "aws_bedrock", service: "bedrock", region: undefined, bearer: true })
    const result = await run(noRegion(request, awsKeysCredential(keys)))
    expect(Result.isFailure(result) && result.failure.message).toContain("has no region")
  })

  it("refuses a call without a credential", async () => {
    const result = await run(bedrock(request, undefined))
    expect(Result.isFailure(result) && result.failure.message).toContain("has no credential")
  })
})
