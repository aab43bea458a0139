// The reference: a minimal pass-through proxy (node:http + an undici pool) that forwards the
// body to the upstream and the answer back. What Node can do here, with no gateway logic.
// A streamed answer (`text/event-stream`) is passed on as it arrives, chunk by chunk.
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Pool } from "undici"

const upstream = process.argv[2]
const pool = new Pool(upstream, { connections: 256, keepAliveTimeout: 60_000 })

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const parts: Array<Buffer> = []
  req.on("data", (part) => parts.push(part))
  req.on("end", async () => {
    try {
      const response = await pool.request({
        path: "/v1/chat/completions",
        method: "POST",
        headers: { "content-type": "application/json" },
        body: Buffer.concat(parts)
      })
      const contentType = String(response.headers["content-type"] ?? "")
      if (contentType.startsWith("text/event-stream")) {
        res.writeHead(response.statusCode, { "content-type": contentType, "cache-control": "no-cache" })
        for await (const chunk of response.body) res.write(chunk)
        res.end()
        return
      }
      const answer = Buffer.from(await response.body.arrayBuffer())
      res.writeHead(response.statusCode, { "content-type": "application/json", "content-length": answer.length })
      res.end(answer)
    } catch (error) {
      res.writeHead(502)
      res.end(String(error))
    }
  })
})
server.listen(0, "127.0.0.1", () => console.log((server.address() as AddressInfo).port))
