/**
 * A TCP proxy for fault injection: point the gateway at the proxy instead of the database, then
 * `cut()` it to simulate a database that stopped (every connection is closed and new ones are
 * accepted and closed at once) and `restore()` it to bring the database back. With `record`,
 * `sent()` is everything clients sent through it, to check what reaches the database.
 */
import * as net from "node:net"

export interface TcpProxy {
  readonly port: number
  /** `url` with its host and port replaced by the proxy's (credentials, path and query kept) */
  readonly urlFor: (url: string) => string
  readonly cut: () => void
  readonly restore: () => void
  /** what clients sent, as UTF-8 text (empty unless started with `record: true`) */
  readonly sent: () => string
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (
  target: { readonly host: string; readonly port: number },
  options: { readonly record?: boolean } = {}
): Promise<TcpProxy> => {
  const sockets = new Set<net.Socket>()
  const recorded: Array<Buffer> = []
  let isCut = false

  const track = (socket: net.Socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  }

  const server = net.createServer((client) => {
    if (isCut) {
      client.destroy()
      return
    }
    const upstream = net.connect({ host: target.host, port: target.port })
    track(client)
    track(upstream)
    if (options.record) client.on("data", (chunk: Buffer) => recorded.push(chunk))
    client.pipe(upstream)
    upstream.pipe(client)
    client.on("error", () => upstream.destroy())
    upstream.on("error", () => client.destroy())
    client.once("close", () => upstream.destroy())
    upstream.once("close", () => client.destroy())
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as net.AddressInfo).port

  const destroyAll = () => {
    for (const socket of sockets) socket.destroy()
    sockets.clear()
  }

  return {
    port,
    urlFor: (url) => {
      const proxied = new URL(url)
      proxied.hostname = "127.0.0.1"
      proxied.port = String(port)
      return proxied.toString()
    },
    cut: () => {
      isCut = true
      destroyAll()
    },
    restore: () => {
      isCut = false
    },
    sent: () => Buffer.concat(recorded).toString("utf8"),
    close: () =>
      new Promise<void>((resolve) => {
        destroyAll()
        server.close(() => resolve())
      })
  }
}
