/** Free TCP ports on 127.0.0.1, for the test servers, the tests and the benchmarks. */
import * as net from "node:net"

/** `count` distinct free ports (all held open until all are known) */
export const freePorts = async (count: number): Promise<Array<number>> => {
  const servers = await Promise.all(Array.from({ length: count }, () =>
    new Promise<net.Server>((resolve, reject) => {
      const server = net.createServer()
      server.on("error", reject)
      server.listen(0, "127.0.0.1", () => resolve(server))
    })))
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port)
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  return ports
}

/** a port nobody listens on right now */
export const freePort = (): Promise<number> => freePorts(1).then(([port]) => port)
