/**
 * Provider URLs built from names (issue 33, finding 1): the patterns (`src/providers/urls.ts`),
 * each codec's reading of what goes into its URLs (Vertex resource names, AI Studio model ids,
 * AWS regions and resources, Azure deployments, batch ids from provider answers), the refusal
 * of short-hands before any client is made, and an audit of every type with a short-hand: a
 * hostile model name is refused, or its calls still go to the type's own host.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { ProviderConfig } from "../../src/config/types.ts"
import type { ModelRequest } from "../../src/inference/types.ts"
import { vertexAnthropicCodec } from "../../src/providers/anthropic/vertex.ts"
import { anthropicCodec } from "../../src/providers/anthropic/index.ts"
import { bedrockCodec } from "../../src/providers/aws/bedrock.ts"
import { sageMakerCodec } from "../../src/providers/aws/sagemaker.ts"
import { azureCodec } from "../../src/providers/azure/index.ts"
import type { BatchDownload, BatchExchange, BatchExchangeRequest, BatchHandle } from "../../src/providers/codec.ts"
import { parseVertexResourceName } from "../../src/providers/gcp/vertex.ts"
import { aiStudioCodec, vertexCodec, vertexModelUrl } from "../../src/providers/gemini/index.ts"
import { openAiCodec } from "../../src/providers/openai/index.ts"
import { parseShorthandModel, providerTypes, shorthandProblem } from "../../src/providers/registry.ts"
import { qualifiedProviderName } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import {
  baseUrlProblem,
  gcpLocation,
  gcpProject,
  httpsUrl as httpsUrlResult,
  modelId,
  nameProblem,
  UrlProblem,
  urlUnder as urlUnderResult
} from "../../src/providers/urls.ts"
import { type HttpCall, HttpTransport } from "../../src/transport.ts"
import { serviceAccountJson, serviceAccountKeys } from "../support/serviceAccount.ts"
import { buildErrors, buildOk } from "./fixtures.ts"

/** the URL, or why it cannot be made */
const urlUnder = (...args: Parameters<typeof urlUnderResult>) => Result.merge(urlUnderResult(...args))
const httpsUrl = (...args: Parameters<typeof httpsUrlResult>) => Result.merge(httpsUrlResult(...args))

describe("the patterns of names in provider URLs", () => {
  it("GCP locations: DNS labels only", () => {
    for (const location of ["us-central1", "europe-west4", "global", "us", "eu", "asia-northeast3"]) {
      expect(nameProblem("location", location, gcpLocation)).toBeUndefined()
    }
    for (const location of ["127.0.0.1:8080#", "127.0.0.1", "evil.com", "x@evil", "US-CENTRAL1", "-us", "us-", "", "a\\b", "us central1", "a".repeat(64)]) {
      expect(nameProblem("location", location, gcpLocation)).toMatch(/^location ".*" is not a GCP location/)
    }
  })
  it("GCP projects: ids, numbers and legacy domain-scoped ids", () => {
    for (const project of ["my-project-123", "p", "123456789012", "example.com:my-project", "fake-project"]) {
      expect(nameProblem("project_id", project, gcpProject)).toBeUndefined()
    }
    for (const project of ["p?x=1", "p#", "..", "a/b", "My-Project", "p@evil", "-p", ""]) {
      expect(nameProblem("project_id", project, gcpProject)).toBeDefined()
    }
  })
  it("model ids: dots, @ and underscores, one path segment", () => {
    for (const id of ["gemini-1.5-pro-002", "claude-3-5-sonnet@20240620", "claude-3-5-sonnet-v2@20241022", "gemma-3-27b-it", "my_model.v2", "1234567890"]) {
      expect(nameProblem("model_id", id, modelId)).toBeUndefined()
    }
    for (const id of ["..", ".", "m/../x", "m?x", "m#x", "m%2F", "m:generateContent", "", "-m", "@m"]) {
      expect(nameProblem("model_id", id, modelId)).toBeDefined()
    }
  })
})

describe("URLs built with new URL and checked", () => {
  it("urlUnder: the base's origin and path, one segment each, the caller's suffix", () => {
    expect(urlUnder("https://h.test/v1/", ["projects", "p", "models", "m@1"], ":streamGenerateContent?alt=sse")).toBe(
      "https://h.test/v1/projects/p/models/m@1:streamGenerateContent?alt=sse"
    )
    expect(urlUnder("http://127.0.0.1:9/v1", ["files", "file-1"])).toBe("http://127.0.0.1:9/v1/files/file-1")
    expect(urlUnder("https://h.test/", ["b", encodeURIComponent("a/b c"), "o"], `?name=${encodeURIComponent("x'y z")}`)).toBe(
      "https://h.test/b/a%2Fb%20c/o?name=x%27y%20z"
    )
  })
  it("urlUnder: a segment that would leave the base, reshape the path or add a query or fragment is refused", () => {
    for (const segment of ["..", ".", "%2e%2E", ".%2e", "a/b", "a?b", "a#b", "a\\b", "", "@evil.com", "a b"]) {
      const url = urlUnder("https://h.test/v1/", ["x", segment])
      // "@evil.com" stays a path segment (no authority can follow a path): accepted, under the base
      if (segment === "@evil.com") expect(url).toBe("https://h.test/v1/x/@evil.com")
      else expect(url, segment).toBeInstanceOf(UrlProblem)
    }
    expect(urlUnder("ftp://h.test/", ["x"])).toBeInstanceOf(UrlProblem)
    expect(urlUnder("https://h.test/?q", ["x"])).toBeInstanceOf(UrlProblem)
  })
  it("httpsUrl: exactly the host given", () => {
    expect(httpsUrl("us-central1-aiplatform.googleapis.com", "/v1/")).toBe("https://us-central1-aiplatform.googleapis.com/v1/")
    for (const host of ["127.0.0.1:1#-aiplatform.googleapis.com", "x@evil.com", "evil.com/x", "evil.com?x", "evil.com\\x", "a b"]) {
      expect(httpsUrl(host, "/v1/"), host).toBeInstanceOf(UrlProblem)
    }
  })
  it("base URLs: http(s), no query or fragment", () => {
    expect(baseUrlProblem("https://api.openai.com/v1/")).toBeUndefined()
    expect(baseUrlProblem("http://127.0.0.1:9")).toBeUndefined()
    expect(baseUrlProblem("ftp://x")).toMatch(/^expected an http:\/\/ or https:\/\/ URL/)
    expect(baseUrlProblem("api.openai.com")).toMatch(/^expected an http:\/\/ or https:\/\/ URL/)
    expect(baseUrlProblem("https://x/v1?key=1")).toMatch(/without a query or fragment/)
    expect(baseUrlProblem("https://x/v1#")).toMatch(/without a query or fragment/)
  })
})

const hostile = (publisher: string) => [
  `projects/p/locations/127.0.0.1:8080#/publishers/${publisher}/models/m`,
  `projects/p/locations/127.0.0.1:8080?/publishers/${publisher}/models/m`,
  `projects/p/locations/127.0.0.1:8080\\/publishers/${publisher}/models/m`,
  `projects/p/locations/x@127.0.0.1:8080#/endpoints/e`,
  `projects/p?x=/locations/us-central1/publishers/${publisher}/models/m`,
  `projects/p/locations/us-central1/publishers/${publisher}/models/m#x`,
  `projects/p/locations/us-central1/publishers/${publisher}/models/../../../x`,
  `projects/p/locations/us-central1/endpoints/..`,
  `projects/p/locations/us-central1/publishers/${publisher}/models/m/extra`,
  `projects/p/locations/us-central1/publishers/someone-else/models/m`
]

describe("Vertex resource names (both Vertex types)", () => {
  it("TensorZero's forms are read: publisher models and endpoints, the global location", () => {
    expect(parseVertexResourceName("projects/my-project/locations/us-east5/publishers/anthropic/models/claude-3-5-sonnet@20240620", "anthropic"))
      .toEqual({ project: "my-project", location: "us-east5", model: "claude-3-5-sonnet@20240620" })
    expect(parseVertexResourceName("projects/123456/locations/global/endpoints/987", "google")).toEqual({ project: "123456", location: "global", endpoint: "987" })
    expect(parseVertexResourceName("gemini-2.5-pro", "google")).toBeUndefined()
  })
  it("a hostile or malformed name is refused naming the part; no URL is made of it", () => {
    for (const [codec, publisher] of [[vertexCodec, "google"], [vertexAnthropicCodec, "anthropic"]] as const) {
      for (const name of hostile(publisher)) {
        const target = (codec.target as (settings: object, model: string) => { readonly problem?: string })({}, name)
        expect(codec.targetProblem?.(target as never), `${codec.type} ${name}`).toMatch(
          /(project_id|location|model_id|endpoint_id) ".*" is not|is not a Vertex AI resource name/
        )
        expect(shorthandProblem(`${codec.type}::${name}`)).toMatch(new RegExp(`names no model the ${codec.type} provider type can call`))
      }
    }
    expect(vertexModelUrl({}, hostile("google")[0])).toEqual({
      problem: `location "127.0.0.1:8080#" is not a GCP location (lower-case letters, digits and hyphens, as us-central1 or global)`
    })
  })
  it("settings are checked the same way (and by the settings' Schema at start-up)", () => {
    expect(vertexModelUrl({ project_id: "p", location: "evil.com#", model_id: "m" }, "")).toEqual({
      problem: expect.stringContaining(`location "evil.com#" is not a GCP location`)
    })
    expect(vertexAnthropicCodec.targetProblem?.(vertexAnthropicCodec.target({ project_id: "p", location: "us-east5", model_id: "m?x" }, "")))
      .toContain(`model_id "m?x" is not a model id`)
  })
  it("gcp_vertex_anthropic takes the endpoint form too, as TensorZero does", () => {
    const target = vertexAnthropicCodec.target({}, "projects/p/locations/europe-west1/endpoints/123")
    expect(vertexAnthropicCodec.url(target, false)).toBe("https://europe-west1-aiplatform.googleapis.com/v1/projects/p/locations/europe-west1/endpoints/123:rawPredict")
  })
})

describe("google_ai_studio_gemini model ids", () => {
  it("the model is one path segment under models/", () => {
    expect(aiStudioCodec.target({}, "gemini-2.5-flash").modelUrl).toBe("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash")
    for (const model of ["../files", "m/../../x", "m?key=x", "m#x", "m:batchGenerateContent"]) {
      expect(aiStudioCodec.targetProblem?.(aiStudioCodec.target({}, model)), model).toContain(`model_name ${JSON.stringify(model)} is not a model id`)
    }
  })
})

describe("AWS and Azure addresses (configuration only: checked at start-up)", () => {
  it("a region, from the settings or AWS_REGION, that is no region makes no host", () => {
    for (const region of ["127.0.0.1:8080#", "evil.com/x", "us-east-1.evil.com"]) {
      const target = bedrockCodec.target({ model_id: "m" }, "", { AWS_REGION: region })
      expect(target.endpoint).toBeUndefined()
      expect(bedrockCodec.targetProblem?.(target)).toMatch(/^region \(the setting, or AWS_REGION or AWS_DEFAULT_REGION\) ".*" is not an AWS region/)
    }
    expect(bedrockCodec.target({ model_id: "m" }, "", { AWS_REGION: "us-gov-west-1" }).endpoint).toBe("https://bedrock-runtime.us-gov-west-1.amazonaws.com")
  })
  it("a model id or endpoint name that is no path segment once encoded is refused", () => {
    expect(bedrockCodec.targetProblem?.(bedrockCodec.target({ model_id: "..", region: "us-east-1" }, "", {}))).toMatch(/^model_id: /)
    expect(bedrockCodec.targetProblem?.(bedrockCodec.target({ model_id: "arn:aws:bedrock:us-east-1:1:inference-profile/x", region: "us-east-1" }, "", {})))
      .toBeUndefined()
    expect(sageMakerCodec.targetProblem?.(sageMakerCodec.target({ endpoint_name: ".", hosted_provider: "openai", region: "us-east-1" }, "", {})))
      .toMatch(/^endpoint_name: /)
  })
  it("an Azure deployment that is no path segment is refused", () => {
    expect(azureCodec.targetProblem?.(azureCodec.target({ endpoint: "https://r.openai.azure.com", deployment_id: ".." }, ""))).toMatch(/^deployment_id: /)
    expect(azureCodec.target({ endpoint: "https://r.openai.azure.com/", deployment_id: "gpt 4o" }, "").url).toBe(
      "https://r.openai.azure.com/openai/deployments/gpt%204o/chat/completions?api-version=2024-10-21"
    )
  })
})

describe("the configuration refuses what would make a bogus address, naming the key", () => {
  const withProvider = (table: string, model = "m") => `
[models.m]
routing = ["p"]
[models.m.providers.p]
${table}

[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "${model}"
`
  const files = { "/cfg/sa.json": "{}" }
  const vertex = (extra: string) => withProvider(`type = "gcp_vertex_gemini"\ncredential_location = "path::sa.json"\n${extra}`)

  it("Vertex settings: location, project_id, model_id, endpoint_id, api_base", () => {
    expect(buildErrors(vertex(`model_id = "m"\nproject_id = "p"\nlocation = "us central1"`), { files }).join("\n"))
      .toMatch(/models\.m\.providers\.p\.location: .*"us central1" is not a GCP location/)
    expect(buildErrors(vertex(`model_id = "m"\nproject_id = "p?x"\nlocation = "us-central1"`), { files }).join("\n"))
      .toMatch(/models\.m\.providers\.p\.project_id: /)
    expect(buildErrors(vertex(`model_id = "m/../x"\nproject_id = "p"\nlocation = "us-central1"`), { files }).join("\n"))
      .toMatch(/models\.m\.providers\.p\.model_id: /)
    expect(buildErrors(vertex(`model_name = "projects/p/locations/127.0.0.1:1#/publishers/google/models/m"`), { files }).join("\n"))
      .toMatch(/models\.m\.providers\.p: location "127\.0\.0\.1:1#" is not a GCP location/)
    expect(buildErrors(vertex(`model_id = "m"\nproject_id = "p"\nlocation = "us-central1"\napi_base = "ftp://x"`), { files }).join("\n"))
      .toMatch(/models\.m\.providers\.p\.api_base: expected an http:\/\/ or https:\/\/ URL/)
    buildOk(vertex(`model_id = "gemini-1.5-pro-002"\nproject_id = "example.com:proj"\nlocation = "global"`), { files })
  })
  it("api_base of the other types, AWS regions and endpoints, Azure endpoints", () => {
    expect(buildErrors(withProvider(`type = "openai"\nmodel_name = "gpt"\napi_base = "https://x/v1?key=1"\napi_key_location = "none"`)).join("\n"))
      .toMatch(/models\.m\.providers\.p\.api_base: expected a base URL without a query or fragment/)
    expect(buildErrors(withProvider(`type = "vllm"\nmodel_name = "m"\napi_base = "localhost:8000"\napi_key_location = "none"`)).join("\n"))
      .toMatch(/models\.m\.providers\.p\.api_base: expected an http/)
    const aws = { AWS_ACCESS_KEY_ID: "AKIA", AWS_SECRET_ACCESS_KEY: "s" }
    expect(buildErrors(withProvider(`type = "aws_bedrock"\nmodel_id = "m"\nregion = "us-east-1.evil.com#"`), { env: aws }).join("\n"))
      .toMatch(/models\.m\.providers\.p\.region: /)
    expect(buildErrors(withProvider(`type = "aws_bedrock"\nmodel_id = "m"`), { env: { ...aws, AWS_REGION: "evil.com#" } }).join("\n"))
      .toMatch(/models\.m\.providers\.p: region .* "evil\.com#" is not an AWS region/)
    expect(buildErrors(withProvider(`type = "aws_sagemaker"\nendpoint_name = "a/b"\nhosted_provider = "openai"\nregion = "us-east-1"`), { env: aws }).join("\n"))
      .toMatch(/models\.m\.providers\.p\.endpoint_name: /)
    expect(buildErrors(withProvider(`type = "azure"\nendpoint = "r.openai.azure.com"\ndeployment_id = "d"\napi_key_location = "none"`)).join("\n"))
      .toMatch(/models\.m\.providers\.p\.endpoint: expected an http/)
  })
  it("a variant naming a short-hand that names nothing its type can call", () => {
    const errors = buildErrors(withProvider(`type = "dummy"\nmodel_name = "echo_request_messages"`, "gcp_vertex_gemini::projects/p/locations/127.0.0.1:1#/publishers/google/models/m"), {
      files
    })
    expect(errors.join("\n")).toMatch(/functions\.f\.variants\.v\.model: .*names no model the gcp_vertex_gemini provider type can call: location/)
  })
})

describe("short-hands are refused before any client is made", () => {
  it("shorthandProblem: the types that build a URL from the model name", () => {
    expect(shorthandProblem("gcp_vertex_gemini::projects/p/locations/us-central1/publishers/google/models/gemini-1.5-pro-002")).toBeUndefined()
    expect(shorthandProblem("gcp_vertex_anthropic::projects/p/locations/us-east5/publishers/anthropic/models/claude-3-5-sonnet@20240620")).toBeUndefined()
    expect(shorthandProblem("google_ai_studio_gemini::gemini-2.5-flash")).toBeUndefined()
    // not a short-hand at all: nothing to refuse here (the caller answers 404)
    expect(shorthandProblem("my_model")).toBeUndefined()
    // the model goes into the body, not the URL: anything the provider may refuse itself
    expect(shorthandProblem("openai::gpt-4o#@127.0.0.1:1/")).toBeUndefined()
  })
})

/**
 * Every type with a short-hand, called with hostile model names: refused by `shorthandProblem`,
 * or its calls (a service account's token request aside) go to the type's own host, at a path
 * under the type's own, with no fragment and no query but `?alt=sse`.
 */
describe("audit: every type with a short-hand keeps its calls on its own host", () => {
  const { privateKey } = serviceAccountKeys()
  const tokenUri = "https://oauth2.googleapis.com/token"
  const account = serviceAccountJson(privateKey, { projectId: "p", keyId: "k", clientEmail: "sa@p.iam.gserviceaccount.com", tokenUri })
  const names = [
    "gpt-4o",
    "projects/p/locations/us-central1/publishers/google/models/gemini-1.5-pro-002",
    "projects/p/locations/us-east5/publishers/anthropic/models/claude-3-5-sonnet@20240620",
    "x#@127.0.0.1:8080/",
    "x?y=1",
    "../../x",
    "x/../../y",
    "//127.0.0.1:8080/x",
    "http://127.0.0.1:8080/",
    "%2e%2e/x",
    "responses::x#@127.0.0.1:8080",
    ...hostile("google"),
    ...hostile("anthropic")
  ]
  const request: ModelRequest = {
    messages: [{ role: "user", content: [{ type: "text", text: "the prompt" }] }],
    params: {},
    functionType: "chat",
    jsonMode: "off",
    providerTools: []
  }
  const shorthandTypes = [...providerTypes.keys()].filter((type) => parseShorthandModel(`${type}::m`) !== undefined)

  it("lists the types it audits", () => {
    expect(shorthandTypes.sort()).toEqual([
      "anthropic",
      "deepseek",
      "dummy",
      "fireworks",
      "gcp_vertex_anthropic",
      "gcp_vertex_gemini",
      "google_ai_studio_gemini",
      "groq",
      "hyperbolic",
      "mistral",
      "openai",
      "openrouter",
      "together",
      "xai"
    ])
  })

  for (const type of shorthandTypes) {
    it(type, async () => {
      const definition = providerTypes.get(type)!
      let home: URL | undefined
      for (const model of names) {
        if (shorthandProblem(`${type}::${model}`) !== undefined) continue
        const sent: Array<HttpCall> = []
        const transport = HttpTransport.of({
          post: (http) =>
            Effect.sync(() => {
              sent.push(http)
              return http.url === tokenUri
                ? { status: 200, text: JSON.stringify({ access_token: "ya29.t", expires_in: 3600, token_type: "Bearer" }) }
                : { status: 500, text: "{}" }
            }),
          postStream: () => Effect.die("not streamed"),
          download: () => Effect.die("no downloads")
        })
        const config: ProviderConfig = {
          name: type,
          type,
          modelName: model,
          credential: { kind: "static", value: type.startsWith("gcp_") ? account : "key" },
          extraBody: [],
          extraHeaders: [],
          timeouts: {},
          settings: {}
        }
        const client = definition.make(config)
        await Effect.runPromise(Effect.exit(Effect.provideService(
          client.infer({
            request,
            apiKey: config.credential.kind === "static" ? config.credential.value : undefined,
            extraBody: [],
            extraHeaders: [],
            modelName: `${type}::${model}`,
            providerName: type,
            qualifiedName: qualifiedProviderName(`${type}::${model}`, type)
          }),
          HttpTransport,
          transport
        )))
        for (const call of sent.filter((call) => call.url !== tokenUri)) {
          const url = new URL(call.url)
          home ??= url
          const googleHost = /^(?:[a-z0-9-]+-)?aiplatform\.googleapis\.com$/.test(url.hostname) && type.startsWith("gcp_")
          expect(googleHost || url.origin === home.origin, `${type}::${model} -> ${call.url}`).toBe(true)
          expect(url.hash, call.url).toBe("")
          expect(["", "?alt=sse"]).toContain(url.search)
          expect(call.url, call.url).not.toContain("127.0.0.1")
        }
      }
      if (type !== "dummy") expect(home, `${type} made no call at all`).toBeDefined()
    })
  }
})

describe("ids from provider answers, put back into URLs, are checked", () => {
  const exchangeOf = (replies: ReadonlyArray<string>) => {
    const sent: Array<BatchExchangeRequest> = []
    const exchange: BatchExchange = (request) => {
      sent.push(request)
      const reply = replies[sent.length - 1]
      return reply === undefined ? Effect.fail(new ProviderFailure({ message: "no reply", timedOut: false })) : Effect.succeed(reply)
    }
    // a result file, read through the same replies a line at a time
    const download: BatchDownload = (request, each) =>
      Effect.flatMap(exchange(request), (text) => {
        const lines = text.split("\n")
        for (let i = 0; i < lines.length; i++) {
          const failed = each(lines[i], i + 1)
          if (failed !== undefined) return Effect.fail(failed)
        }
        return Effect.void
      })
    return { exchange, download, sent }
  }
  const failure = <A>(effect: Effect.Effect<A, ProviderFailure>) => Effect.runPromise(Effect.flip(effect))
  const items = [{ id: "0190f0f0-0000-7000-8000-000000000001", body: { contents: [] } }]

  it("OpenAI: a batch id or file id that is no id fails the call before it is sent", async () => {
    const target = openAiCodec.target({ api_base: "https://api.openai.test/v1/" }, "gpt-4o")
    const hooks = openAiCodec.batch!
    const handle = (providerBatchId: string): BatchHandle => ({ providerBatchId, data: { input_file_id: "file-1", custom_ids: ["a"] } })
    for (const id of ["../files", "batch_1/../../x", "b?x=1", "b#", "..", "@127.0.0.1:1"]) {
      const { exchange, download, sent } = exchangeOf([])
      expect((await failure(hooks.poll(target, handle(id), exchange, download))).message).toMatch(/^the provider's id ".*" is not a provider object id/)
      expect(sent).toEqual([])
    }
    // an output file id from the batch's answer
    const { exchange, download, sent } = exchangeOf([JSON.stringify({ id: "batch_1", status: "completed", output_file_id: "../../../x" })])
    expect((await failure(hooks.poll(target, handle("batch_1"), exchange, download))).message).toMatch(/"\.\.\/\.\.\/\.\.\/x" is not a provider object id/)
    expect(sent.map((request) => request.url)).toEqual(["https://api.openai.test/v1/batches/batch_1"])
    // the batch id the creation answers is checked before it is kept
    const started = exchangeOf([JSON.stringify({ id: "file-1", status: "processed" }), JSON.stringify({ id: "../x" })])
    expect((await failure(hooks.start(target, [{ id: "a", body: {} }], started.exchange))).message).toMatch(/"\.\.\/x" is not a provider object id/)
  })

  it("Anthropic: a message batch id that is no id", async () => {
    const target = anthropicCodec.target({ api_base: "https://api.anthropic.test/v1/" }, "claude")
    const { exchange, download, sent } = exchangeOf([])
    const message = (await failure(anthropicCodec.batch!.poll(target, { providerBatchId: "../../x", data: { ids: ["a"] } }, exchange, download))).message
    expect(message).toMatch(/^message batch: the provider's id "\.\.\/\.\.\/x" is not a provider object id/)
    expect(sent).toEqual([])
    const started = exchangeOf([JSON.stringify({ type: "message_batch", id: "msgbatch_1?x" })])
    expect((await failure(anthropicCodec.batch!.start(target, [{ id: "a", body: {} }], started.exchange))).message).toMatch(/"msgbatch_1\?x"/)
  })

  it("Gemini API: a batch name that is not batches/<id>", async () => {
    const target = aiStudioCodec.target({ api_base: "https://studio.test/v1beta/" }, "gemini-2.5-flash")
    for (const name of ["batches/../../x", "batches/a?b", "files/x", "batches/"]) {
      const { exchange, download, sent } = exchangeOf([])
      const message = (await failure(aiStudioCodec.batch!.poll(target, { providerBatchId: name, data: { ids: ["a"] } }, exchange, download))).message
      expect(message, name).toMatch(/which is no Gemini API batch name/)
      expect(sent).toEqual([])
    }
    const started = exchangeOf([JSON.stringify({ name: "batches/x#y" })])
    expect((await failure(aiStudioCodec.batch!.start(target, items, started.exchange))).message).toMatch(/which is no Gemini API batch name/)
  })

  it("Vertex AI: a job name or an output bucket from the answer that would point elsewhere", async () => {
    const target = vertexCodec.target({
      api_base: "https://vertex.test/v1/",
      project_id: "p",
      location: "us-central1",
      model_id: "gemini-2.5-flash",
      batch: { storage_type: "cloud_storage", input_uri_prefix: "gs://in/x/", output_uri_prefix: "gs://out/y/", storage_api_base: "https://storage.test/" }
    }, "")
    const hooks = vertexCodec.batch!
    for (const name of ["projects/p/locations/127.0.0.1:1#/batchPredictionJobs/1", "projects/p/locations/us-central1/batchPredictionJobs/..", "../x", "projects/p?/locations/l/batchPredictionJobs/1"]) {
      const { exchange, download, sent } = exchangeOf([])
      const message = (await failure(hooks.poll(target, { providerBatchId: name, data: { ids: ["a"] } }, exchange, download))).message
      expect(message, name).toMatch(/which is no Vertex AI batch job name/)
      expect(sent).toEqual([])
    }
    const job = "projects/123/locations/us-central1/batchPredictionJobs/456"
    const { exchange, download, sent } = exchangeOf([JSON.stringify({ name: job, state: "JOB_STATE_SUCCEEDED", outputInfo: { gcsOutputDirectory: "gs://../x" } })])
    const message = (await failure(hooks.poll(target, { providerBatchId: job, data: { ids: ["a"] } }, exchange, download))).message
    expect(message).toMatch(/names its output "gs:\/\/\.\.\/x": the bucket "\.\." is not a Cloud Storage bucket name/)
    expect(sent.map((request) => request.url)).toEqual([`https://vertex.test/v1/${job}`])
    // the job the creation answers is checked before it is kept
    const started = exchangeOf(["{}", JSON.stringify({ name: "projects/p/locations/evil.com#/batchPredictionJobs/1" })])
    expect((await failure(hooks.start(target, items, started.exchange))).message).toMatch(/which is no Vertex AI batch job name: location "evil\.com#"/)
  })
})
