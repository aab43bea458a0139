/**
 * A local server that speaks the OpenAI Chat Completions wire format, for integration tests
 * and benchmarks. It records every request it receives (path, headers, parsed body) and
 * answers from a script: by default a fixed text reply, streamed as SSE when asked; or a
 * recorded answer of the `openai` codec's fixtures (`recordedAnswer`, `recordedStream`).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { receivedBody } from "./fakeWireServer.ts"
import { responseFixture, streamFixture } from "./providerFixtures.ts"

export interface ReceivedRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

/** How to answer one request. */
export type Reply =
  /** `headers`: more response headers (a `retry-after`, say) */
  | { readonly kind: "json"; readonly status?: number; readonly body: unknown; readonly delayMs?: number; readonly headers?: Readonly<Record<string, string>> }
  /** a body as it is, `text/plain` unless `contentType` says otherwise */
  | {
    readonly kind: "text"
    readonly status: number
    readonly body: string
    readonly delayMs?: number
    readonly contentType?: string
    readonly headers?: Readonly<Record<string, string>>
  }
  /** SSE: each chunk is sent as `data: <json>` (strings as they are), then `data: [DONE]` unless `noDone` */
  | {
    readonly kind: "stream"
    readonly chunks: ReadonlyArray<unknown>
    readonly delayMs?: number
    readonly chunkDelayMs?: number
    readonly noDone?: boolean
    /** stop after this many chunks and hang, to test cancellation */
    readonly hangAfter?: number
    /** destroy the connection after this many chunks, to test a provider that dies mid-stream */
    readonly destroyAfter?: number
  }
  /**
   * `head`, then `piece` over and over (chunked, no content-length, at the pace the client reads
   * or every `pieceDelayMs`) until the client hangs up, or `limitBytes` (default 256 MiB) are sent
   */
  | {
    readonly kind: "endless"
    readonly contentType: string
    readonly status?: number
    readonly head?: string
    readonly piece: string
    readonly pieceDelayMs?: number
    readonly limitBytes?: number
    /** a `content-length` to announce (whatever is sent) */
    readonly declaredLength?: number
  }
  /** a Server-Sent Events body as it is (a recorded transcript), written in pieces of `pieceBytes` when set */
  | { readonly kind: "sse"; readonly transcript: string; readonly pieceBytes?: number; readonly pieceDelayMs?: number }
  | { readonly kind: "hang" }
  | { readonly kind: "destroy" }

/** The recorded answer `responses/<name>.json` of the openai fixtures, as it was sent. */
export const recordedAnswer = (name: string): Reply => {
  const fixture = responseFixture("openai", name)
  return { kind: "text", status: fixture.status, body: JSON.stringify(fixture.body), contentType: "application/json" }
}

/** The recorded stream `streams/<name>.sse` of the openai fixtures, cut in pieces of `pieceBytes` when set. */
export const recordedStream = (name: string, pieceBytes?: number): Reply => ({
  kind: "sse",
  transcript: streamFixture("openai", name).transcript,
  ...(pieceBytes === undefined ? {} : { pieceBytes, pieceDelayMs: 1 })
})

export const completion = (
  message: Record<string, unknown>,
  options: { finishReason?: string; usage?: { prompt_tokens: number; completion_tokens: number } } = {}
) => ({
  id: "chatcmpl-test",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "fake-model",
  choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: options.finishReason ?? "stop" }],
  usage: { ...(options.usage ?? { prompt_tokens: 12, completion_tokens: 7 }), total_tokens: 19 }
})

export const textCompletion = (text: string) => completion({ content: text })

/** OpenAI's streamed shape for a text answer: a role chunk, content chunks, a finish chunk, a usage chunk. */
export const textStreamChunks = (pieces: ReadonlyArray<string>, usage = { prompt_tokens: 12, completion_tokens: 7 }) => [
  { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "" } }] },
  ...pieces.map((piece) => ({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { content: piece }, finish_reason: null }]
  })),
  { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  { id: "c", object: "chat.completion.chunk", choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }
]

/**
 * OpenAI's streamed shape for tool calls: a role chunk, then each call's index, id, type and
 * name with empty arguments, its arguments in two pieces (index only), a finish chunk and a
 * usage chunk.
 */
export const toolCallStreamChunks = (
  calls: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string; readonly arguments: string } }>,
  usage = { prompt_tokens: 12, completion_tokens: 7 }
) => {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finishReason }]
  })
  return [
    chunk({ role: "assistant", content: null }),
    ...calls.flatMap((call, index) => {
      const args = call.function.arguments
      const cut = Math.ceil(args.length / 2)
      return [
        chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }),
        chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, cut) } }] }),
        chunk({ tool_calls: [{ index, function: { arguments: args.slice(cut) } }] })
      ]
    }),
    chunk({}, "tool_calls"),
    { id: "c", object: "chat.completion.chunk", choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }
  ]
}

/** `[models.<model>.providers.<name>]`, an `openai` provider at `apiBase` with the credential `keyLocation` */
export const openAiProviderToml = (model: string, name: string, modelName: string, apiBase: string, keyLocation: string) => `
[models.${model}.providers.${name}]
type = "openai"
model_name = "${modelName}"
api_base = "${apiBase}"
api_key_location = "${keyLocation}"
`

export interface FakeOpenAi {
  readonly url: string
  /** the `api_base` to configure: `<url>/v1/` */
  readonly apiBase: string
  readonly requests: Array<ReceivedRequest>
  /** answers the next requests in order; when empty, `fallback` answers */
  readonly script: Array<Reply>
  fallback: (request: ReceivedRequest) => Reply
  /** the fallback it started with: a short text completion, or a short stream when asked for one */
  readonly defaultFallback: (request: ReceivedRequest) => Reply
  /** between tests: forgets the requests and the script, and answers with `defaultFallback` again */
  reset(): void
  /** connections closed by the client before the answer finished */
  readonly aborted: () => number
  close(): Promise<void>
}

export const startFakeOpenAi = async (): Promise<FakeOpenAi> => {
  const requests: Array<ReceivedRequest> = []
  const script: Array<Reply> = []
  let aborted = 0
  const sockets = new Set<import("node:net").Socket>()
  const defaultFallback: FakeOpenAi["fallback"] = (request) =>
    request.body?.stream === true
      ? { kind: "stream", chunks: textStreamChunks(["Hello", " from", " fake"]) }
      : { kind: "json", body: textCompletion("Hello from fake OpenAI") }
  const fake: Partial<FakeOpenAi> & { fallback: FakeOpenAi["fallback"] } = {
    fallback: defaultFallback,
    defaultFallback,
    reset: () => {
      requests.length = 0
      script.length = 0
      fake.fallback = defaultFallback
    }
  }
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      const body = receivedBody(Buffer.concat(parts).toString("utf8"))
      const received: ReceivedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body }
      requests.push(received)
      const reply = script.shift() ?? fake.fallback(received)
      let finished = false
      res.on("close", () => {
        if (!finished) aborted++
      })
      const done = () => {
        finished = true
      }
      const later = (ms: number | undefined, f: () => void) => (ms ? setTimeout(f, ms) : f())
      switch (reply.kind) {
        case "json":
          later(reply.delayMs, () => {
            res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers })
            res.end(JSON.stringify(reply.body), done)
          })
          break
        case "text":
          later(reply.delayMs, () => {
            res.writeHead(reply.status, { "content-type": reply.contentType ?? "text/plain", ...reply.headers })
            res.end(reply.body, done)
          })
          break
        case "stream":
          later(reply.delayMs, () => {
            res.writeHead(200, { "content-type": "text/event-stream" })
            let index = 0
            const next = () => {
              if (res.destroyed) return
              if (reply.hangAfter !== undefined && index >= reply.hangAfter) return
              if (reply.destroyAfter !== undefined && index >= reply.destroyAfter) {
                finished = true
                req.socket.destroy()
                return
              }
              if (index < reply.chunks.length) {
                const chunk = reply.chunks[index++]
                res.write(`data: ${typeof chunk === "string" ? chunk : JSON.stringify(chunk)}\n\n`)
                later(reply.chunkDelayMs, next)
              } else {
                res.end(reply.noDone ? "" : "data: [DONE]\n\n", done)
              }
            }
            next()
          })
          break
        case "sse": {
          res.writeHead(200, { "content-type": "text/event-stream" })
          const bytes = Buffer.from(reply.transcript)
          const size = reply.pieceBytes ?? bytes.length
          let at = 0
          const next = () => {
            if (res.destroyed) return
            if (at >= bytes.length) return res.end(done)
            res.write(bytes.subarray(at, at + size))
            at += size
            later(reply.pieceDelayMs, next)
          }
          next()
          break
        }
        case "endless": {
          res.writeHead(reply.status ?? 200, {
            "content-type": reply.contentType,
            ...(reply.declaredLength === undefined ? {} : { "content-length": reply.declaredLength })
          })
          const limit = reply.limitBytes ?? 256 * 1024 * 1024
          let sent = 0
          const write = () => {
            while (!res.destroyed) {
              if (sent >= limit) return res.end(done)
              const piece = sent === 0 && reply.head !== undefined ? reply.head : reply.piece
              sent += Buffer.byteLength(piece)
              // waits for the client to read (drain) when its buffers are full
              if (!res.write(piece)) return res.once("drain", write)
              if (reply.pieceDelayMs !== undefined) return setTimeout(write, reply.pieceDelayMs)
            }
          }
          write()
          break
        }
        case "hang":
          break
        case "destroy":
          req.socket.destroy()
          break
      }
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const url = `http://127.0.0.1:${port}`
  return Object.assign(fake, {
    url,
    apiBase: `${url}/v1/`,
    requests,
    script,
    aborted: () => aborted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }) as FakeOpenAi
}
