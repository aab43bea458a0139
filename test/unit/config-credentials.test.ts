/**
 * Credential locations as a configuration writes them: every form, resolved against the
 * environment and files at start-up, the start-up check of positive-weight variants, and
 * `[provider_types.<type>.defaults]`.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { awsKeysCredential, parseAwsKeys, parseCredentialLocation } from "../../src/config/credentials.ts"
import { providerCall as providerCallResult } from "../../src/inference/providerCall.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { buildErrors, buildOk, configPath } from "./fixtures.ts"

/** the call `providerCall` makes, or why it cannot be made */
const providerCall = <Request>(...args: Parameters<typeof providerCallResult<Request>>) => Result.merge(providerCallResult<Request>(...args))

const model = (location: string) => `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "openai"
model_name = "gpt"
api_key_location = ${location}

[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
`

const credentialOf = (toml: string, options: Parameters<typeof buildOk>[1] = {}) =>
  buildOk(toml, options).models.get("m")!.providers.get("p")!.credential

const request = { messages: [], params: {}, functionType: "chat" as const, jsonMode: "off" as const, providerTools: [] }
const noEdits = { name: "v", extraBody: [], extraHeaders: [] }
const callWith = (toml: string, credentials: Record<string, string>, options: Parameters<typeof buildOk>[1] = {}) => {
  const provider = buildOk(toml, options).models.get("m")!.providers.get("p")!
  return providerCall(request, "m", provider, noEdits, { bodyEdits: [], headerEdits: [], credentials })
}

describe("credential locations", () => {
  it("reads path::FILE at start-up, relative to the configuration file's folder", () => {
    expect(credentialOf(model(`"path::keys/sa.json"`), { files: { "/cfg/keys/sa.json": "{\"k\":1}" } }))
      .toEqual({ kind: "static", value: "{\"k\":1}" })
  })

  it("refuses to start when a path::FILE of a positive-weight variant cannot be read, naming the file", () => {
    const errors = buildErrors(model(`"path::missing.json"`))
    expect(errors).toHaveLength(1)
    expect(errors[0]).toContain(`${configPath}: functions.f.variants.v.model`)
    expect(errors[0]).toContain("file /cfg/missing.json cannot be read")
  })

  it("reads path_from_env::NAME: the file the variable names, and names the variable when it is unset", () => {
    expect(credentialOf(model(`"path_from_env::SA_PATH"`), { env: { SA_PATH: "/secrets/sa.json" }, files: { "/secrets/sa.json": "sa" } }))
      .toEqual({ kind: "static", value: "sa" })
    expect(buildErrors(model(`"path_from_env::SA_PATH"`))[0]).toContain("environment variable SA_PATH is not set")
  })

  it("resolves sdk to a bearer token when AWS_BEARER_TOKEN_BEDROCK is set, else to the access keys", () => {
    expect(credentialOf(model(`"sdk"`), { env: { AWS_BEARER_TOKEN_BEDROCK: "bt" } })).toEqual({ kind: "static", value: "bt" })
    const keys = credentialOf(model(`"sdk"`), { env: { AWS_ACCESS_KEY_ID: "AK", AWS_SECRET_ACCESS_KEY: "SK", AWS_SESSION_TOKEN: "ST" } })
    expect(keys.kind).toBe("static")
    expect(parseAwsKeys((keys as { value: string }).value)).toEqual({ accessKeyId: "AK", secretAccessKey: "SK", sessionToken: "ST" })
    expect(buildErrors(model(`"sdk"`), { env: { AWS_ACCESS_KEY_ID: "AK" } })[0]).toContain("AWS_SECRET_ACCESS_KEY is not set")
  })

  it("a plain key is never read as AWS keys", () => {
    expect(parseAwsKeys("{\"accessKeyId\":\"a\",\"secretAccessKey\":\"b\"}")).toBeUndefined()
    expect(parseAwsKeys(awsKeysCredential({ accessKeyId: "a", secretAccessKey: "b" }))).toEqual({ accessKeyId: "a", secretAccessKey: "b" })
  })

  it("{ default = dynamic, fallback = env }: the request's credential when it has one, else the variable", () => {
    const toml = model(`{ default = "dynamic::customer", fallback = "env::HOUSE_KEY" }`)
    const options = { env: { HOUSE_KEY: "house" } }
    expect((callWith(toml, { customer: "theirs" }, options) as { apiKey: string }).apiKey).toBe("theirs")
    expect((callWith(toml, {}, options) as { apiKey: string }).apiKey).toBe("house")
  })

  it("{ default = dynamic, fallback = env } with the variable unset: starts, and a request without the credential is refused naming it", () => {
    const toml = model(`{ default = "dynamic::customer", fallback = "env::HOUSE_KEY" }`)
    const refused = callWith(toml, {})
    expect(refused).toBeInstanceOf(ProviderFailure)
    expect((refused as ProviderFailure).message).toBe("environment variable HOUSE_KEY is not set")
  })

  it("{ default = env, fallback = env }: the first variable set", () => {
    const toml = model(`{ default = "env::FIRST", fallback = "env::SECOND" }`)
    expect(credentialOf(toml, { env: { FIRST: "1", SECOND: "2" } })).toEqual({ kind: "static", value: "1" })
    expect(credentialOf(toml, { env: { SECOND: "2" } })).toEqual({ kind: "static", value: "2" })
    expect(buildErrors(toml)[0]).toContain("SECOND is not set")
  })

  it("a dynamic credential missing from the request is the caller's fault", () => {
    expect(callWith(model(`"dynamic::customer"`), {})).toBeInstanceOf(InvalidRequest)
  })

  it("names what is wrong with a location as written", () => {
    expect(buildErrors(model(`"file::x"`))[0]).toContain(`models.m.providers.p.api_key_location: expected "env::NAME"`)
    expect(buildErrors(model(`{ default = "env::A" }`))[0]).toContain("expected { default")
    expect(buildErrors(model(`{ default = "env::A", fallback = "nope" }`))[0]).toContain(`fallback: expected`)
    expect(parseCredentialLocation(42)).toContain("expected")
  })

  it("accepts credential_location as TensorZero writes it, but not both keys", () => {
    const toml = model(`"env::A"`).replace("api_key_location", "credential_location")
    expect(credentialOf(toml, { env: { A: "a" } })).toEqual({ kind: "static", value: "a" })
    const both = model(`"env::A"`).replace(`api_key_location = "env::A"`, `api_key_location = "env::A"\ncredential_location = "env::B"`)
    expect(buildErrors(both, { env: { A: "a", B: "b" } })[0]).toContain("not both")
  })
})

describe("[provider_types.<type>.defaults]", () => {
  const shorthand = `
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "openai::gpt-4o"
`
  it("overrides a type's default credential location for configured providers and short-hands alike", () => {
    const toml = `
[provider_types.openai.defaults]
api_key_location = "env::ORG_OPENAI_KEY"

[models.m]
routing = ["p"]
[models.m.providers.p]
type = "openai"
model_name = "gpt"
` + shorthand
    const config = buildOk(toml, { env: { ORG_OPENAI_KEY: "org" } })
    expect(config.models.get("m")!.providers.get("p")!.credential).toEqual({ kind: "static", value: "org" })
    expect(config.shorthands.get("openai")?.credential).toEqual({ kind: "static", value: "org" })
    expect(buildErrors(toml, { env: { OPENAI_API_KEY: "ignored" } })[0]).toContain("ORG_OPENAI_KEY is not set")
  })

  it("a provider's own location still wins over the type's default", () => {
    const toml = `
[provider_types.openai.defaults]
api_key_location = "env::ORG_OPENAI_KEY"
` + model(`"env::MINE"`)
    expect(credentialOf(toml, { env: { MINE: "m" } })).toEqual({ kind: "static", value: "m" })
  })

  it("names an unknown provider type and an unknown key", () => {
    const errors = buildErrors(`
[provider_types.nope.defaults]
api_key_location = "none"
[provider_types.openai.defaults]
api_key = "x"
`)
    expect(errors.some((error) => error.includes("provider_types.nope: unknown provider type"))).toBe(true)
    expect(errors.some((error) => error.includes("provider_types.openai.defaults.api_key"))).toBe(true)
  })
})

describe("provider settings that can make no call are start-up errors", () => {
  const withProvider = (table: string) => `
[models.m]
routing = ["p"]
[models.m.providers.p]
${table}

[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
weight = 0
`
  const aws = { AWS_ACCESS_KEY_ID: "AK", AWS_SECRET_ACCESS_KEY: "SK" }

  it("an AWS provider without a region, naming how to give one", () => {
    const errors = buildErrors(withProvider(`type = "aws_bedrock"\nmodel_id = "anthropic.claude"`), { env: aws })
    expect(errors).toEqual([`${configPath}: models.m.providers.p: the aws_bedrock provider has no region: set region in its table, or AWS_REGION (or give endpoint_url)`])
    expect(buildErrors(withProvider(`type = "aws_sagemaker"\nendpoint_name = "e"\nhosted_provider = "openai"`), { env: aws })[0])
      .toContain("the aws_sagemaker provider has no region")
    buildOk(withProvider(`type = "aws_bedrock"\nmodel_id = "anthropic.claude"`), { env: { ...aws, AWS_REGION: "eu-west-1" } })
    buildOk(withProvider(`type = "aws_bedrock"\nmodel_id = "anthropic.claude"\nendpoint_url = "http://127.0.0.1:9"`), { env: aws })
  })

  it("a Vertex provider without its project, location or model, saying what it lacks", () => {
    const files = { "/cfg/sa.json": "{}" }
    const gemini = buildErrors(withProvider(`type = "gcp_vertex_gemini"\nmodel_id = "gemini-2.5-pro"\ncredential_location = "path::sa.json"`), { files })
    expect(gemini).toHaveLength(1)
    expect(gemini[0]).toContain("models.m.providers.p: the gcp_vertex_gemini provider lacks project_id, location")
    const anthropic = buildErrors(withProvider(`type = "gcp_vertex_anthropic"\nmodel_id = "claude"\ncredential_location = "path::sa.json"`), { files })
    expect(anthropic[0]).toContain("models.m.providers.p: a gcp_vertex_anthropic provider with model_id or endpoint_id needs location and project_id")
    buildOk(withProvider(`type = "gcp_vertex_gemini"\nmodel_id = "m"\nlocation = "us-central1"\nproject_id = "p"\ncredential_location = "path::sa.json"`), { files })
  })
})
