// A fast fake OpenAI Chat Completions upstream for benchmarks: answers every POST with the
// same completion, without looking at the request beyond reading it. Prints its port.
//
// A request with `"stream": true` gets a Chat Completions stream in OpenAI's SSE framing
// (a role chunk, text chunks, a chunk with the finish reason, a usage chunk when
// `stream_options.include_usage` asks for it, `data: [DONE]`): 8 text chunks sent at once, or,
// for the model `bench-model-paced`, 64 text chunks 5 ms apart (the first at once).
import * as http from "node:http"
import type { AddressInfo } from "node:net"

const body = Buffer.from(JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "bench-model",
  choices: [{ index: 0, message: { role: "assistant", content: "A short answer from the benchmark upstream." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 }
}))

const event = (model: string, choices: ReadonlyArray<unknown>, usage?: unknown) =>
  `data: ${
    JSON.stringify({
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model,
      system_fingerprint: "fp_bench",
      choices,
      ...(usage === undefined ? {} : { usage })
    })
  }\n\n`
const delta = (model: string, content: Record<string, string>, finishReason: string | null = null) =>
  event(model, [{ index: 0, delta: content, logprobs: null, finish_reason: finishReason }])

/** the stream's events: the role chunk and the first text chunk, then one text chunk each, then the end */
const streamEvents = (model: string, textChunks: number, includeUsage: boolean) => {
  const texts = Array.from({ length: textChunks }, (_, index) => delta(model, { content: `word${index} ` }))
  const end = delta(model, {}, "stop") +
    (includeUsage ? event(model, [], { prompt_tokens: 20, completion_tokens: textChunks, total_tokens: 20 + textChunks }) : "") +
    "data: [DONE]\n\n"
  return [delta(model, { role: "assistant", content: "" }) + texts[0], ...texts.slice(1, -1), texts[textChunks - 1] + end]
}
const fast = streamEvents("bench-model", 8, true).join("")
const fastWithoutUsage = streamEvents("bench-model", 8, false).join("")
const paced = streamEvents("bench-model-paced", 64, true)
const pacedWithoutUsage = streamEvents("bench-model-paced", 64, false)
const pacedIntervalMs = 5

const streamHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" }

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const parts: Array<Buffer> = []
  req.on("data", (part: Buffer) => parts.push(part))
  req.on("end", () => {
    const text = parts.length === 0 ? "" : Buffer.concat(parts).toString()
    if (!/"stream"\s*:\s*true/.test(text)) {
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
      res.end(body)
      return
    }
    const request = JSON.parse(text) as { model?: string; stream_options?: { include_usage?: boolean } }
    const includeUsage = request.stream_options?.include_usage === true
    res.writeHead(200, streamHeaders)
    if (request.model !== "bench-model-paced") {
      // the whole stream in one write: its events arrive at once
      res.end(includeUsage ? fast : fastWithoutUsage)
      return
    }
    const events = includeUsage ? paced : pacedWithoutUsage
    let next = 0
    const send = () => {
      if (res.destroyed) return
      if (next === events.length - 1) return void res.end(events[next])
      res.write(events[next++])
      setTimeout(send, pacedIntervalMs)
    }
    send()
  })
})
server.listen(0, "127.0.0.1", () => console.log((server.address() as AddressInfo).port))
