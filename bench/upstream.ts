// A fast fake OpenAI Chat Completions upstream for benchmarks: answers every POST with the
// same completion, without looking at the request beyond reading it. Prints its port.
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

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  req.resume()
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
    res.end(body)
  })
})
server.listen(0, "127.0.0.1", () => console.log((server.address() as AddressInfo).port))
