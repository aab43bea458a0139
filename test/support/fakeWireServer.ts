/**
 * A small local HTTP server for the fakes of the Responses API, Azure and Mistral: it records
 * every request (method, path with its query, headers, parsed body) and answers each with what
 * its handler says, or with the next reply of `script` when a test queued one.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface WireRequest {
  readonly method: string
  /** the path with its query string */
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

export interface WireReply {
  readonly status: number
  readonly contentType?: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body: string
}

export const jsonReply = (body: unknown, status = 200, headers?: Readonly<Record<string, string>>): WireReply => ({
  status,
  contentType: "application/json",
  headers,
  body: JSON.stringify(body)
})

export const sseReply = (transcript: string): WireReply => ({ status: 200, contentType: "text/event-stream", body: transcript })

export interface WireServer {
  readonly url: string
  readonly requests: Array<WireRequest>
  /** answers the next requests in order, before the handler */
  readonly script: Array<WireReply>
  handler: (request: WireRequest) => WireReply
  reset(): void
  close(): Promise<void>
}

/** a request body as a fake keeps it: its JSON, its text where it is not JSON, nothing when empty */
export const receivedBody = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const startWireServer = async (handler: (request: WireRequest) => WireReply): Promise<WireServer> => {
  const requests: Array<WireRequest> = []
  const script: Array<WireReply> = []
  const sockets = new Set<import("node:net").Socket>()
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      const body = receivedBody(Buffer.concat(parts).toString("utf8"))
      const received: WireRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body }
      requests.push(received)
      const reply = script.shift() ?? fake.handler(received)
      res.writeHead(reply.status, { "content-type": reply.contentType ?? "application/json", ...reply.headers })
      res.end(reply.body)
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const initial = handler
  const fake: WireServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    script,
    handler,
    reset: () => {
      requests.length = 0
      script.length = 0
      fake.handler = initial
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  return fake
}

/** `{ name, arguments }` of `get_weather` for a city, as the conformance scenarios answer it */
export const weatherCall = (id: string, city: string) => ({ id, name: "get_weather", arguments: JSON.stringify({ city }) })
