// The soak's OpenAI-compatible upstream: well-behaved or hostile by the request's `model`.
// Prints its port.
//   ok         a short completion, or a stream of four chunks and the usage (stream: true)
//   keyed      as ok when the key is `Bearer good-key`, else 401
//   redos      a completion whose text is {"answer":"aaa...a!"} (a regex backtracking trap)
//   huge       200 with a chunked JSON body that never ends (until 64 MB or the gateway hangs up)
//   no_newline 200 text/event-stream whose bytes never contain a newline
//   html       200 text/html, plain or streamed
//   echo_key   401 whose message repeats the Authorization header
import * as http from "node:http"
import type { AddressInfo } from "node:net"

const completion = (text: string) =>
  JSON.stringify({
    id: "chatcmpl-soak",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "soak",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 }
  })

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-soak", object: "chat.completion.chunk", created: 1_700_000_000, model: "soak", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

const answerOk = (stream: boolean, res: http.ServerResponse) => {
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" }).end(completion("A short answer from the soak upstream."))
    return
  }
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const piece of ["A short ", "answer from ", "the soak ", "upstream."]) res.write(chunk({ content: piece }))
  res.write(chunk({}, "stop"))
  res.write(`data: ${JSON.stringify({ id: "chatcmpl-soak", object: "chat.completion.chunk", created: 1_700_000_000, model: "soak", choices: [], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } })}\n\n`)
  res.end("data: [DONE]\n\n")
}

/** writes `piece` until `limit` bytes or the peer goes away, respecting backpressure */
const flood = (res: http.ServerResponse, piece: Buffer, limit: number) => {
  let sent = 0
  const pump = () => {
    while (sent < limit && !res.destroyed) {
      sent += piece.length
      if (!res.write(piece)) return void res.once("drain", pump)
    }
    res.end()
  }
  pump()
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const parts: Array<Buffer> = []
  req.on("data", (part) => parts.push(part))
  req.on("end", () => {
    let body: { model?: string; stream?: boolean } = {}
    try {
      body = JSON.parse(Buffer.concat(parts).toString("utf8"))
    } catch {
      // answered as ok below
    }
    const stream = body.stream === true
    switch (body.model) {
      case "keyed":
        if (req.headers.authorization !== "Bearer good-key") {
          res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "invalid key" } }))
          return
        }
        return answerOk(stream, res)
      case "redos":
        res.writeHead(200, { "content-type": "application/json" }).end(completion(JSON.stringify({ answer: `${"a".repeat(40)}!` })))
        return
      case "huge":
        res.writeHead(200, { "content-type": "application/json" })
        res.write(`{"id":"chatcmpl-soak","choices":[{"index":0,"message":{"role":"assistant","content":"`)
        return flood(res, Buffer.alloc(1 << 20, "x"), 64 << 20)
      case "no_newline":
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: ")
        return flood(res, Buffer.alloc(64 << 10, "y"), 64 << 20)
      case "html":
        res.writeHead(200, { "content-type": "text/html" }).end("<html><body>Service temporarily unavailable</body></html>")
        return
      case "echo_key":
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({
          error: { message: `Incorrect API key provided: ${req.headers.authorization ?? "(none)"}` }
        }))
        return
      default:
        return answerOk(stream, res)
    }
  })
})
server.listen(0, "127.0.0.1", () => console.log((server.address() as AddressInfo).port))
