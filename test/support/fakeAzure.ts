/**
 * A local server that speaks Azure OpenAI's chat completions and embeddings:
 * `POST /openai/deployments/{deployment}/chat/completions?api-version=...` (and `/embeddings`),
 * the key in the `api-key` header. It refuses another key (401), another deployment (404) or
 * a request without `api-version` (404, as Azure does), and answers the conformance scenarios.
 */
import { type ChatDialect, chatConformance } from "./chatConformance.ts"
import { jsonReply, startWireServer, type WireReply, type WireRequest, type WireServer } from "./fakeWireServer.ts"

export const azureFakeKey = "azure-fake-key"
export const azureFakeDeployment = "gpt-deployment"
export const azureFakeApiVersion = "2024-10-21"

export const azureError = (status: number, message: string, code = "BadRequest"): WireReply =>
  jsonReply({ error: { code, message, param: null, type: status === 400 ? "invalid_request_error" : null } }, status)

export const azureDialect: ChatDialect = {
  error: (status, message) => azureError(status, message),
  // models served by Azure that reason (DeepSeek-R1 on Azure AI Foundry) answer `reasoning_content`
  thoughtThenText: (thought, text) => ({ content: text, reasoning_content: thought }),
  usage: (input, output, cached) => ({
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: cached }
  })
}

export interface FakeAzure extends WireServer {
  /** the `endpoint` setting */
  readonly endpoint: string
}

export const azureEmbeddings = (body: any): WireReply => {
  const inputs: Array<string> = Array.isArray(body?.input) ? body.input : [body?.input]
  return jsonReply({
    object: "list",
    data: inputs.map((text, index) => ({ object: "embedding", index, embedding: [text.length, index, 0.5] })),
    model: "text-embedding-3-small",
    usage: { prompt_tokens: inputs.length * 3, total_tokens: inputs.length * 3 }
  })
}

export const startFakeAzure = async (
  options: { readonly key?: string; readonly deployment?: string; readonly apiVersion?: string; readonly answerWith?: (request: WireRequest) => WireReply } = {}
): Promise<FakeAzure> => {
  const key = options.key ?? azureFakeKey
  const deployment = options.deployment ?? azureFakeDeployment
  const apiVersion = options.apiVersion ?? azureFakeApiVersion
  const answerWith = options.answerWith ?? ((request: WireRequest) => chatConformance(azureDialect, request))
  const server = await startWireServer((request) => {
    if (request.headers["api-key"] !== key) {
      return azureError(401, "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.", "401")
    }
    const url = new URL(request.path, "http://fake")
    if (url.searchParams.get("api-version") !== apiVersion) {
      return azureError(404, `api-version ${url.searchParams.get("api-version")} is not supported`, "404")
    }
    if (url.pathname === `/openai/deployments/${deployment}/embeddings`) return azureEmbeddings(request.body)
    if (url.pathname !== `/openai/deployments/${deployment}/chat/completions`) {
      return azureError(404, "The API deployment for this resource does not exist.", "DeploymentNotFound")
    }
    return answerWith(request)
  })
  return Object.assign(server, { endpoint: server.url })
}
