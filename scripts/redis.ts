/**
 * Makes sure a Redis server answers on 127.0.0.1:6379, as on the CI machines: starts one that
 * keeps nothing on disk when none answers, installing Debian's package first when Redis is
 * missing (needs root). The server is the machine's own and stays running; tests use logical
 * databases or key prefixes of their own and clean them up.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { accepts } from "./postgres.ts"

export const redisUrl = "redis://127.0.0.1:6379"

const answers = () => accepts("127.0.0.1", 6379)

const serverBin = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((path) => fs.existsSync(path))

export const ensureRedis = async (): Promise<string> => {
  if (await answers()) return redisUrl
  let bin = serverBin
  if (bin === undefined) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env })
    execFileSync("apt-get", ["install", "-y", "redis-server"], { stdio: ["ignore", "ignore", "inherit"], env })
    bin = "/usr/bin/redis-server"
  }
  execFileSync(bin, ["--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "ignore", "inherit"]
  })
  const deadline = Date.now() + 15_000
  while (!(await answers())) {
    if (Date.now() > deadline) throw new Error("Redis does not answer on 127.0.0.1:6379")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return redisUrl
}
