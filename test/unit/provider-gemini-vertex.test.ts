/**
 * What the Gemini codecs do besides the recorded fixtures: Vertex AI's addresses (settings,
 * resource-name model names, endpoints, the global location), its service-account access token
 * (fetched from the key file's token_uri with a JWT the key signed, kept, sent as a bearer
 * token), and the requests refused with a message naming the provider and the feature.
 */
import * as Effect from "effect/Effect"
import { jwtVerify } from "jose"
import { describe, expect, it } from "vitest"
import type { ModelRequest } from "../../src/inference/types.ts"
import { aiStudioCodec, vertexCodec, vertexGeminiProvider, vertexModelUrl } from "../../src/providers/gemini/index.ts"
import { parseShorthandModel } from "../../src/providers/registry.ts"
import { wireRequest } from "../../src/providers/wireRequest.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, HttpTransport } from "../../src/transport.ts"
import { serviceAccountJson, serviceAccountKeys } from "../support/serviceAccount.ts"

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: [],
  ...over
})

const call = (over: Partial<ModelRequest> = {}, apiKey: string | undefined = "key"): ProviderCall => ({
  request: request(over),
  apiKey,
  extraBody: [],
  extraHeaders: [],
  modelName: "m",
  providerName: "p",
  qualifiedName: qualifiedProviderName("m", "p")
})

describe("gcp_vertex_gemini addresses", () => {
  it("from settings: the regional host, the publisher model", () => {
    expect(vertexModelUrl({ project_id: "proj", location: "us-central1", model_id: "gemini-2.5-flash" }, "")).toBe(
      "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    )
  })
  it("an endpoint instead of a model; the global location has no regional host", () => {
    expect(vertexModelUrl({ project_id: "proj", location: "global", endpoint_id: "123" }, "")).toBe(
      "https://aiplatform.googleapis.com/v1/projects/proj/locations/global/endpoints/123"
    )
  })
  it("from a resource name as model name (the short-hand's form), api_base replacing the host", () => {
    expect(vertexModelUrl({ api_base: "http://127.0.0.1:9/v1" }, "projects/p1/locations/europe-west4/publishers/google/models/gemini-2.0-flash")).toBe(
      "http://127.0.0.1:9/v1/projects/p1/locations/europe-west4/publishers/google/models/gemini-2.0-flash"
    )
    expect(vertexModelUrl({}, "projects/p1/locations/us-east1/endpoints/987")).toBe(
      "https://us-east1-aiplatform.googleapis.com/v1/projects/p1/locations/us-east1/endpoints/987"
    )
  })
  it("a plain model name is the model id when project and location are set", () => {
    expect(vertexModelUrl({ project_id: "p", location: "us-central1" }, "gemini-2.5-pro")).toBe(
      "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro"
    )
  })
  it("what is missing is named, and every call fails with it", () => {
    const target = vertexCodec.target({ model_id: "gemini" }, "")
    const built = wireRequest(vertexCodec, target, call(), false)
    expect("body" in built).toBe(false)
    expect((built as { message: string }).message).toContain("gcp_vertex_gemini provider lacks project_id, location")
  })
  it("the short-hands of both types", () => {
    expect(parseShorthandModel("gcp_vertex_gemini::projects/p/locations/l/publishers/google/models/m")).toEqual({
      type: "gcp_vertex_gemini",
      model: "projects/p/locations/l/publishers/google/models/m"
    })
    expect(parseShorthandModel("google_ai_studio_gemini::gemini-2.5-flash")).toEqual({ type: "google_ai_studio_gemini", model: "gemini-2.5-flash" })
  })
  it("streams at :streamGenerateContent?alt=sse, without a key header (the authorizer adds the token)", () => {
    const target = vertexCodec.target({ project_id: "p", location: "us-central1", model_id: "g" }, "")
    const built = wireRequest(vertexCodec, target, call(), true) as HttpCall
    expect(built.url).toBe("https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/g:streamGenerateContent?alt=sse")
    expect(built.headers).toEqual({ "content-type": "application/json" })
  })
})

describe("gcp_vertex_gemini service account", () => {
  const { privateKey, publicKey } = serviceAccountKeys()
  const tokenUri = "http://token.test/token"
  const account = serviceAccountJson(privateKey, { projectId: "p", keyId: "kid-1", clientEmail: "sa@p.iam.gserviceaccount.com", tokenUri })

  it("exchanges a JWT signed by the key for an access token once, and sends it as a bearer token on every call", async () => {
    const sent: Array<HttpCall> = []
    const transport = HttpTransport.of({
      post: (http) =>
        Effect.promise(async () => {
          sent.push(http)
          if (http.url === tokenUri) {
            const form = new URLSearchParams(http.body)
            expect(form.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer")
            const { payload } = await jwtVerify(form.get("assertion")!, publicKey, { issuer: "sa@p.iam.gserviceaccount.com", audience: tokenUri })
            expect(payload.scope).toBe("https://www.googleapis.com/auth/cloud-platform")
            return { status: 200, text: JSON.stringify({ access_token: "ya29.token", expires_in: 3600, token_type: "Bearer" }) }
          }
          return { status: 200, text: JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "hi" }] }, finishReason: "STOP" }] }) }
        }),
      postStream: () => Effect.die("no stream"),
      download: () => Effect.die("no download")
    })
    const client = vertexGeminiProvider.make({
      name: "p",
      type: "gcp_vertex_gemini",
      modelName: "projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash",
      settings: {},
      credential: { kind: "static", value: account },
      extraBody: [],
      extraHeaders: []
    } as unknown as Parameters<typeof vertexGeminiProvider.make>[0])
    for (let i = 0; i < 2; i++) {
      const result = await Effect.runPromise(Effect.provideService(client.infer(call({}, account)), HttpTransport, transport))
      expect(result.output).toEqual([{ type: "text", text: "hi" }])
    }
    expect(sent.map((http) => http.url)).toEqual([
      tokenUri,
      "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
      "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent"
    ])
    expect(sent[1].headers.authorization).toBe("Bearer ya29.token")
    expect(sent[2].headers.authorization).toBe("Bearer ya29.token")
    // the key never leaves in a model call
    expect(JSON.stringify(sent.slice(1))).not.toContain("PRIVATE KEY")
  })
})

describe("gemini refusals", () => {
  const target = aiStudioCodec.target({}, "gemini-2.5-flash")
  const refusal = (over: Partial<ModelRequest>, codec = aiStudioCodec, t = target) => {
    const built = wireRequest(codec, t, call(over), false)
    return "body" in built ? undefined : built.message
  }
  it("AI Studio takes no http URL (only its File API's URIs)", () => {
    expect(refusal({
      messages: [{ role: "user", content: [{ type: "file", source: { kind: "url", url: "https://example.com/cat.png" } }] }]
    })).toContain("the google_ai_studio_gemini provider takes files as base64 data or as a Gemini File API URI")
  })
  it("Vertex takes gs:// and https URLs as fileData, the MIME type from the name when not given", () => {
    const vertexTarget = vertexCodec.target({ project_id: "p", location: "l", model_id: "m" }, "")
    const built = wireRequest(vertexCodec, vertexTarget, call({
      messages: [{ role: "user", content: [{ type: "file", source: { kind: "url", url: "gs://bucket/doc.pdf" } }] }]
    }), false) as HttpCall
    expect(JSON.parse(built.body).contents[0].parts).toEqual([{ fileData: { mimeType: "application/pdf", fileUri: "gs://bucket/doc.pdf" } }])
  })
  it("a schema with references is refused, naming where", () => {
    expect(refusal({
      functionType: "json",
      jsonMode: "strict",
      outputSchema: { type: "object", properties: { a: { $ref: "#/$defs/A" } }, $defs: { A: { type: "string" } } }
    })).toContain(`output_schema: Gemini's schema subset has no references ($ref at "/properties/a")`)
  })
  it("custom (free-text) tools are refused", () => {
    expect(refusal({
      tools: {
        tools: [{ name: "sql", description: "", parameters: {}, strict: false, validator: undefined as never, custom: {} }],
        choice: { type: "auto" }
      }
    })).toContain("the google_ai_studio_gemini provider has no custom (free-text) tools: sql")
  })
  it("tool call arguments that are not a JSON object are refused", () => {
    const result = refusal({
      messages: [{ role: "assistant", content: [{ type: "tool_call", id: "a", name: "f", arguments: "[1]" }] }]
    })
    expect(result).toContain("Gemini takes a tool call's arguments as a JSON object")
  })
})
