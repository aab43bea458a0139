// A fake OpenTelemetry collector for `npm run bench -- --traces`: takes every OTLP/HTTP export
// (reads the body, answers 200). Prints its port.
import * as http from "node:http"
import type { AddressInfo } from "node:net"

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  req.resume()
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": 2 })
    res.end("{}")
  })
})
server.listen(0, "127.0.0.1", () => console.log((server.address() as AddressInfo).port))
