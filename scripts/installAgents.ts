/**
 * The coding agents that test/integration/agents-cli.test.ts drives, installed for those tests
 * only: into test-artifacts/agents/ (ignored by git), never into the product's dependencies
 * (package.json). Pinned; installed when missing or at another version, else left as they are
 * (a check of two files). By hand: `node scripts/installAgents.ts` prints each agent's binary.
 *
 * What the packages hold (checked on @anthropic-ai/claude-code 2.1.332): the package itself is
 * a stub `bin/claude.exe` (a shell script saying the native binary is missing), `install.cjs`
 * and `cli-wrapper.cjs`; the native binary (~400 MB, a single executable) comes in an optional
 * platform package from the npm registry (`@anthropic-ai/claude-code-linux-x64`, `-musl`,
 * `-arm64`..., selected by npm from their `os`/`cpu`/`libc`), which the postinstall
 * (`node install.cjs`) copies or links over the stub. Nothing is downloaded from anywhere but
 * the npm registry. A newer npm may hold back install scripts it was not told to allow: the
 * postinstall is then run here.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const agentsDir = path.join(root, "test-artifacts/agents")

interface Agent {
  readonly package: string
  readonly version: string
  /** the executable, relative to the package's folder */
  readonly bin: string
}

export const claudeCode: Agent = { package: "@anthropic-ai/claude-code", version: "2.1.332", bin: "bin/claude.exe" }

const agents: ReadonlyArray<Agent> = [claudeCode]

const packageDir = (agent: Agent) => path.join(agentsDir, "node_modules", agent.package)
const binPath = (agent: Agent) => path.join(packageDir(agent), agent.bin)

const installedVersion = (agent: Agent): string | undefined => {
  try {
    return JSON.parse(fs.readFileSync(path.join(packageDir(agent), "package.json"), "utf8")).version
  } catch {
    return undefined
  }
}

/** the native executable (ELF or Mach-O), not the stub script the package ships in its place */
const isNative = (file: string): boolean => {
  try {
    const head = Buffer.alloc(4)
    const fd = fs.openSync(file, "r")
    try {
      fs.readSync(fd, head, 0, 4, 0)
    } finally {
      fs.closeSync(fd)
    }
    return head.toString("latin1") === "\x7fELF" || [0xfeedfacf, 0xcffaedfe].includes(head.readUInt32BE(0))
  } catch {
    return false
  }
}

const ready = (agent: Agent) => installedVersion(agent) === agent.version && isNative(binPath(agent))

/**
 * Installs the pinned agents that are missing or at another version (all of them in one npm
 * command: an install without them would remove the others, which no package.json names), and
 * returns the path of `agent`'s executable.
 */
export const ensureAgent = (agent: Agent): string => {
  if (!agents.includes(agent)) throw new Error(`${agent.package} is not one of the pinned agents`)
  if (!agents.every(ready)) {
    fs.mkdirSync(agentsDir, { recursive: true })
    execFileSync("npm", [
      "install",
      "--prefix",
      agentsDir,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...agents.map((each) => `${each.package}@${each.version}`)
    ], { stdio: ["ignore", "ignore", "inherit"] })
    for (const each of agents) {
      const install = path.join(packageDir(each), "install.cjs")
      if (!isNative(binPath(each)) && fs.existsSync(install)) {
        execFileSync(process.execPath, [install], { cwd: packageDir(each), stdio: ["ignore", "ignore", "inherit"] })
      }
    }
  }
  const bin = binPath(agent)
  if (!ready(agent)) throw new Error(`npm installed ${agent.package}@${agent.version} but ${bin} is not its native executable`)
  return bin
}

if (import.meta.main) {
  for (const agent of agents) console.log(`${agent.package}@${agent.version}: ${ensureAgent(agent)}`)
}
