/**
 * Makes sure a PostgreSQL server answers on 127.0.0.1:5432 with trust authentication, as on
 * the CI machines: starts the installed cluster when it is stopped, and installs Debian's
 * package first when PostgreSQL is missing (needs root). The server is the machine's own and
 * stays running; tests work in databases of their own and drop them.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

export const postgresHost = "127.0.0.1"
export const postgresPort = 5432
export const postgresUrl = `postgres://postgres@${postgresHost}:${postgresPort}/postgres`

const clustersRoot = "/etc/postgresql"

/** whether something accepts TCP connections on host:port (within a second) */
export const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port })
    socket.setTimeout(1000)
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
    socket.once("timeout", () => {
      socket.destroy()
      resolve(false)
    })
  })

const installedVersions = () => (fs.existsSync(clustersRoot) ? fs.readdirSync(clustersRoot) : [])

/** A fresh Debian cluster asks local users for passwords; the tests connect as `postgres` without one. */
const trustLocalConnections = (version: string) => {
  const hba = path.join(clustersRoot, version, "main/pg_hba.conf")
  const trust = "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
  const current = fs.readFileSync(hba, "utf8")
  if (!current.startsWith(trust)) fs.writeFileSync(hba, trust + current)
}

const install = () => {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env })
  execFileSync("apt-get", ["install", "-y", "postgresql"], { stdio: ["ignore", "ignore", "inherit"], env })
  for (const version of installedVersions()) trustLocalConnections(version)
}

export const ensurePostgres = async (): Promise<string> => {
  if (await accepts(postgresHost, postgresPort)) return postgresUrl
  if (installedVersions().length === 0) install()
  for (const version of installedVersions()) {
    execFileSync("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"], { stdio: ["ignore", "ignore", "inherit"] })
  }
  const deadline = Date.now() + 30_000
  while (!(await accepts(postgresHost, postgresPort))) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL does not answer on ${postgresHost}:${postgresPort}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return postgresUrl
}
