/**
 * A local server that speaks OpenAI's embeddings API (`POST <base>/v1/embeddings`,
 * https://platform.openai.com/docs/api-reference/embeddings/create): it checks the bearer key,
 * answers a deterministic vector per input (of `dimensions` values, 3 by default) in OpenAI's
 * shape with `data` in reverse index order (clients must use `index`), or the error status set
 * in `failWith`. It records what it received.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface FakeEmbeddings {
  /** the `api_base` to configure: `<url>/v1/` */
  readonly apiBase: string
  readonly requests: Array<{ readonly path: string; readonly authorization: string | undefined; readonly body: any }>
  /** answer every request with this status and OpenAI's error body */
  failWith: number | undefined
  /** each answer waits this long (a slow provider, so that a task is still running when its gateway stops) */
  delayMs: number
  close(): Promise<void>
}

/** the vector the fake answers for `text`: values derived from its characters, exact in float32 */
export const fakeVector = (text: string, dimensions = 3): Array<number> =>
  Array.from({ length: dimensions }, (_, index) => ((text.length + index * 7 + (text.charCodeAt(index % Math.max(1, text.length)) || 0)) % 64) / 64)

export const startFakeEmbeddings = async (key: string): Promise<FakeEmbeddings> => {
  const requests: FakeEmbeddings["requests"] = []
  const fake = { requests, failWith: undefined as number | undefined, delayMs: 0 }
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8") || "null")
      requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body })
      const answer = (status: number, value: unknown) => {
        setTimeout(() => {
          res.writeHead(status, { "content-type": "application/json" })
          res.end(JSON.stringify(value))
        }, fake.delayMs)
      }
      const error = (status: number, message: string, type: string) => answer(status, { error: { message, type, param: null, code: null } })
      if (req.method !== "POST" || req.url !== "/v1/embeddings") return error(404, `no route ${req.method} ${req.url}`, "invalid_request_error")
      if (req.headers.authorization !== `Bearer ${key}`) return error(401, "Incorrect API key provided", "invalid_request_error")
      if (fake.failWith !== undefined) return error(fake.failWith, "the fake is failing on purpose", "server_error")
      const inputs: Array<string> = typeof body.input === "string" ? [body.input] : body.input
      const data = inputs.map((text, index) => ({ object: "embedding", index, embedding: fakeVector(text, body.dimensions) })).reverse()
      const tokens = inputs.reduce((sum, text) => sum + text.split(/\s+/).length, 0)
      answer(200, { object: "list", data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(fake, {
    apiBase: `http://127.0.0.1:${port}/v1/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  })
}

/** `[embedding_models.small]`: `text-embedding-3-small` on the fake at `apiBase` (its one provider `fake`), the key in `EMBED_KEY` */
export const embeddingModelToml = (apiBase: string) => `
[embedding_models.small]
routing = ["fake"]
[embedding_models.small.providers.fake]
type = "openai"
model_name = "text-embedding-3-small"
api_base = "${apiBase}"
api_key_location = "env::EMBED_KEY"
`
