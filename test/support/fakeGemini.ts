/**
 * A local server that speaks Gemini's wire format for both of its addresses, for integration
 * and conformance tests:
 * - AI Studio: `POST /v1beta/models/<model>:generateContent` and `:streamGenerateContent?alt=sse`,
 *   with the key in `x-goog-api-key` (missing: 403 PERMISSION_DENIED; wrong: 400 API key not
 *   valid, as Google answers);
 * - Vertex AI: `POST /v1/projects/<p>/locations/<l>/publishers/google/models/<m>:...` (or
 *   `endpoints/<e>`), with `Authorization: Bearer <token>` (else 401 UNAUTHENTICATED), the token
 *   issued by its own OAuth2 token endpoint (`POST /token`, the JWT bearer grant) to a JWT signed
 *   by the throwaway service account's key (verified against its public key).
 * Streams are SSE events of whole `GenerateContentResponse`s separated by CRLF, as Google sends
 * them. Errors are Google API errors (`{"error": {"code", "message", "status"}}`). It answers
 * the conformance scenarios (test/support/conformance.ts) by the marker in the request, checking
 * what each needs arrived in Gemini's format; anything else answers a short text, unless the
 * test scripted the answer.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { jwtVerify } from "jose"
import { conformanceImage, conformanceToolResult, scenarioOf, toolResultAnswer } from "./conformance.ts"
import { serviceAccountJson, serviceAccountKeys } from "./serviceAccount.ts"

export interface GeminiRequest {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
  /** which address it came to */
  readonly api: "ai_studio" | "vertex"
  readonly stream: boolean
}

/** How to answer one request: a JSON body (a `GenerateContentResponse` or an error), or SSE events. */
export type GeminiReply =
  | { readonly kind: "json"; readonly status?: number; readonly body: unknown }
  | { readonly kind: "sse"; readonly events: ReadonlyArray<unknown> }

export interface FakeGemini {
  readonly url: string
  /** `api_base` of a google_ai_studio_gemini provider */
  readonly aiStudioBase: string
  /** `api_base` of a gcp_vertex_gemini provider */
  readonly vertexBase: string
  readonly apiKey: string
  /** the service account's key file (JSON), its token_uri this server's */
  readonly serviceAccount: string
  readonly requests: Array<GeminiRequest>
  /** access tokens issued so far */
  readonly tokensIssued: () => number
  /** answers the next model requests in order, before the scenarios and the default text */
  readonly script: Array<GeminiReply>
  reset(): void
  close(): Promise<void>
}

export const googleError = (code: number, status: string, message: string): GeminiReply => ({
  kind: "json",
  status: code,
  body: { error: { code, message, status } }
})

export const geminiAnswer = (
  parts: ReadonlyArray<unknown>,
  options: { finishReason?: string; usage?: Record<string, number> } = {}
) => ({
  candidates: [{ content: { role: "model", parts }, finishReason: options.finishReason ?? "STOP", index: 0 }],
  usageMetadata: options.usage ?? { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 },
  modelVersion: "gemini-fake",
  responseId: "fake-response"
})

const text = (value: string): GeminiReply => ({ kind: "json", body: geminiAnswer([{ text: value }]) })

/** a streamed text: one event per piece, the finish reason and usage in the last */
export const streamedText = (pieces: ReadonlyArray<string>): GeminiReply => ({
  kind: "sse",
  events: pieces.map((piece, index) => ({
    candidates: [{
      content: { role: "model", parts: [{ text: piece }] },
      index: 0,
      ...(index === pieces.length - 1 ? { finishReason: "STOP" } : {})
    }],
    usageMetadata: index === pieces.length - 1
      ? { promptTokenCount: 5, candidatesTokenCount: pieces.length, totalTokenCount: 5 + pieces.length }
      : { promptTokenCount: 5, totalTokenCount: 5 }
  }))
})

const conformanceProblem = (what: string) => googleError(400, "INVALID_ARGUMENT", `conformance: ${what}`)

const declarations = (body: any): Array<any> =>
  (Array.isArray(body?.tools) ? body.tools : []).flatMap((tool: any) => Array.isArray(tool?.functionDeclarations) ? tool.functionDeclarations : [])

const parts = (body: any, role: string): Array<any> =>
  (Array.isArray(body?.contents) ? body.contents : []).filter((content: any) => content?.role === role).flatMap((content: any) => content.parts ?? [])

/** what Gemini itself refuses in any request: roles other than user and model, contents without parts */
const malformed = (body: any): string | undefined => {
  if (!Array.isArray(body?.contents) || body.contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified"
  for (const content of body.contents) {
    if (content?.role !== "user" && content?.role !== "model") return `Please use a valid role: user, model. (got ${content?.role})`
    if (!Array.isArray(content.parts) || content.parts.length === 0) return "* GenerateContentRequest.contents.parts: contents.parts must not be empty."
  }
  return undefined
}

const hasKeyword = (schema: unknown, keyword: string): boolean =>
  typeof schema === "object" && schema !== null &&
  (keyword in schema || Object.values(schema).some((value) => hasKeyword(value, keyword)))

/** The conformance answer for a scenario's request, or the problem with what it carried. */
const conformanceReply = (scenario: ReturnType<typeof scenarioOf>, body: any, stream: boolean): GeminiReply | undefined => {
  const weather = () => {
    const declared = declarations(body).find((declaration) => declaration?.name === "get_weather")
    if (declared?.parameters?.properties?.city?.type !== "string") return "get_weather is not declared with parameters {city: string}"
    if (hasKeyword(declared.parameters, "additionalProperties")) return "additionalProperties is not in Gemini's schema"
    const mode = body?.toolConfig?.functionCallingConfig?.mode
    if (mode !== undefined && mode !== "AUTO") return `functionCallingConfig.mode is ${mode}, not AUTO`
    return undefined
  }
  switch (scenario) {
    case undefined:
      return undefined
    case "text":
      return text("conformance text")
    case "stream":
      return stream ? streamedText(["conformance", " text"]) : conformanceProblem("the stream scenario was not streamed")
    case "tool_call":
    case "parallel_tool_calls":
    case "streamed_tool_calls": {
      const problem = weather()
      if (problem !== undefined) return conformanceProblem(problem)
      const calls = [{ functionCall: { id: "call_1", name: "get_weather", args: { city: "Paris" } } }]
      if (scenario !== "tool_call") calls.push({ functionCall: { id: "call_2", name: "get_weather", args: { city: "London" } } })
      if (scenario !== "streamed_tool_calls") return { kind: "json", body: geminiAnswer(calls) }
      if (!stream) return conformanceProblem("the streamed_tool_calls scenario was not streamed")
      // Gemini streams each function call whole, one event each; the last has the finish reason and usage
      return {
        kind: "sse",
        events: calls.map((call, index) => ({
          candidates: [{ content: { role: "model", parts: [call] }, index: 0, ...(index === calls.length - 1 ? { finishReason: "STOP" } : {}) }],
          usageMetadata: { promptTokenCount: 12, ...(index === calls.length - 1 ? { candidatesTokenCount: 7 } : {}), totalTokenCount: 19 }
        }))
      }
    }
    case "json_strict": {
      const config = body?.generationConfig
      if (config?.responseMimeType !== "application/json") return conformanceProblem("generationConfig.responseMimeType is not application/json")
      if (config?.responseSchema?.properties?.answer?.type !== "string") return conformanceProblem("generationConfig.responseSchema lacks {answer: string}")
      if (hasKeyword(config.responseSchema, "additionalProperties")) return conformanceProblem("additionalProperties is not in Gemini's schema")
      return text("{\"answer\":\"conformance\"}")
    }
    case "json_tool": {
      const respond = declarations(body).find((declaration) => declaration?.name === "respond")
      if (respond?.parameters?.properties?.answer === undefined) return conformanceProblem("the respond tool is not declared with the output schema")
      const config = body?.toolConfig?.functionCallingConfig
      if (config?.mode !== "ANY" || JSON.stringify(config?.allowedFunctionNames) !== "[\"respond\"]") {
        return conformanceProblem("the respond tool is not forced (mode ANY, allowedFunctionNames [respond])")
      }
      return { kind: "json", body: geminiAnswer([{ functionCall: { id: "call_1", name: "respond", args: { answer: "conformance" } } }]) }
    }
    case "image": {
      const image = parts(body, "user").find((part) => part?.inlineData !== undefined)?.inlineData
      if (image?.mimeType !== conformanceImage.mimeType || image?.data !== conformanceImage.data) {
        return conformanceProblem("the image is not an inlineData part with the PNG's base64 data")
      }
      return text("image received")
    }
    case "thought_round_trip":
      return {
        kind: "json",
        body: geminiAnswer([{ text: "thinking", thought: true, thoughtSignature: "sig-conformance" }, { text: "first" }])
      }
    case "thought_round_trip_2": {
      const sent = parts(body, "model").find((part) => part?.thought === true)
      if (sent?.thoughtSignature !== "sig-conformance") return conformanceProblem("the thought's signature was not sent back on its part")
      return text("second")
    }
    case "tool_result": {
      if (!parts(body, "model").some((part) => part?.functionCall?.name === "get_weather")) return conformanceProblem("the functionCall was not sent back")
      const result = parts(body, "user").find((part) => part?.functionResponse?.name === "get_weather")
      if (result === undefined || !JSON.stringify(result.functionResponse.response).includes(conformanceToolResult)) {
        return conformanceProblem("the functionResponse of get_weather is missing")
      }
      return text(toolResultAnswer)
    }
    case "error":
      return conformanceProblem("prompt is too long")
    case "usage":
      return {
        kind: "json",
        body: geminiAnswer([{ text: "conformance text" }], {
          usage: { promptTokenCount: 11, candidatesTokenCount: 7, cachedContentTokenCount: 3, totalTokenCount: 18 }
        })
      }
  }
}

const aiStudioPath = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)(\?alt=sse)?$/
const vertexPath =
  /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/(?:publishers\/google\/models|endpoints)\/[^/:]+:(generateContent|streamGenerateContent)(\?alt=sse)?$/

export const startFakeGemini = async (): Promise<FakeGemini> => {
  const apiKey = "AIza-fake-gemini-key"
  const { privateKey, publicKey } = serviceAccountKeys()
  const clientEmail = "gateway-test@fake-project.iam.gserviceaccount.com"
  const requests: Array<GeminiRequest> = []
  const script: Array<GeminiReply> = []
  const tokens = new Set<string>()
  const sockets = new Set<import("node:net").Socket>()
  let url = ""

  const send = (res: http.ServerResponse, reply: GeminiReply) => {
    if (reply.kind === "json") {
      res.writeHead(reply.status ?? 200, { "content-type": "application/json; charset=UTF-8" })
      res.end(JSON.stringify(reply.body))
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream" })
    for (const event of reply.events) res.write(`data: ${JSON.stringify(event)}\r\n\r\n`)
    res.end()
  }

  /** the OAuth2 token endpoint: a JWT bearer grant whose assertion the service account's key signed */
  const issueToken = async (body: string): Promise<GeminiReply> => {
    const form = new URLSearchParams(body)
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      return { kind: "json", status: 400, body: { error: "unsupported_grant_type", error_description: "Invalid grant_type" } }
    }
    try {
      const { payload } = await jwtVerify(form.get("assertion") ?? "", publicKey, { issuer: clientEmail, audience: `${url}/token` })
      if (payload.scope !== "https://www.googleapis.com/auth/cloud-platform") throw new Error("scope")
    } catch {
      return { kind: "json", status: 400, body: { error: "invalid_grant", error_description: "Invalid JWT Signature." } }
    }
    const token = `ya29.fake-${tokens.size + 1}`
    tokens.add(token)
    return { kind: "json", body: { access_token: token, expires_in: 3599, token_type: "Bearer" } }
  }

  const answer = (path: string, headers: http.IncomingHttpHeaders, raw: string): GeminiReply => {
    const studio = aiStudioPath.exec(path)
    const vertex = studio === null ? vertexPath.exec(path) : null
    const matched = studio ?? vertex
    if (matched === null) return googleError(404, "NOT_FOUND", `no such method: ${path}`)
    const api = studio !== null ? "ai_studio" : "vertex"
    if (api === "ai_studio") {
      const key = headers["x-goog-api-key"]
      if (key === undefined) {
        return googleError(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
      }
      if (key !== apiKey) return googleError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
    } else {
      const authorization = headers.authorization ?? ""
      if (!authorization.startsWith("Bearer ") || !tokens.has(authorization.slice("Bearer ".length))) {
        return googleError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
      }
    }
    const stream = matched[1] === "streamGenerateContent"
    if (stream && matched[2] === undefined) return googleError(400, "INVALID_ARGUMENT", "conformance: streamGenerateContent without alt=sse answers a JSON array, not events")
    let body: any
    try {
      body = JSON.parse(raw)
    } catch {
      return googleError(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
    }
    requests.push({ path, headers, body, api, stream })
    const problem = malformed(body)
    if (problem !== undefined) return googleError(400, "INVALID_ARGUMENT", problem)
    const scripted = script.shift()
    if (scripted !== undefined) return scripted
    const reply = conformanceReply(scenarioOf(body), body, stream)
    if (reply === undefined) return stream ? streamedText(["Hello", " from", " fake Gemini"]) : text("Hello from fake Gemini")
    // a whole answer to a streamed request: one event holding it (as Gemini streams a short answer)
    return stream && reply.kind === "json" && reply.status === undefined ? { kind: "sse", events: [reply.body] } : reply
  }

  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const path = req.url ?? ""
      if (req.method === "POST" && path === "/token") {
        void issueToken(text).then((reply) => send(res, reply))
        return
      }
      send(res, req.method === "POST" ? answer(path, req.headers, text) : googleError(405, "METHOD_NOT_ALLOWED", "POST only"))
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const serviceAccount = serviceAccountJson(privateKey, {
    projectId: "fake-project",
    keyId: "fake-key-1",
    clientEmail,
    clientId: "1",
    tokenUri: `${url}/token`
  })
  return {
    url,
    aiStudioBase: `${url}/v1beta/`,
    vertexBase: `${url}/v1/`,
    apiKey,
    serviceAccount,
    requests,
    tokensIssued: () => tokens.size,
    script,
    reset: () => {
      requests.length = 0
      script.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
