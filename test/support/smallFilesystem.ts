/**
 * A small filesystem of its own for tests of a full disk: a tmpfs of a few megabytes mounted
 * on a temporary folder (the tests run as root, in CI too). A filler file takes its space and
 * gives it back. Unmounted by `release`, and when the test process exits however it exits
 * (lazily, should something still hold a file there), so that a failed test leaves no mount.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export interface SmallFilesystem {
  readonly dir: string
  /** bytes still free there */
  readonly freeBytes: () => number
  /** takes the free space but `leaveBytes` (0: every last block, to ENOSPC) with a filler file */
  readonly fill: (leaveBytes: number) => void
  /** gives the filler's space back */
  readonly unfill: () => void
  readonly release: () => void
}

const chunk = Buffer.alloc(1024 * 1024, 0x5a)

export const mountSmallFilesystem = (megabytes: number): SmallFilesystem => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-small-fs-"))
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m`, "tmpfs", dir])
  let mounted = true
  const release = () => {
    if (!mounted) return
    mounted = false
    try {
      execFileSync("umount", [dir], { stdio: "ignore" })
    } catch {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" })
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", release)
  const filler = path.join(dir, "filler")
  const freeBytes = () => {
    const stats = fs.statfsSync(dir)
    return stats.bavail * stats.bsize
  }
  const fill = (leaveBytes: number) => {
    const fd = fs.openSync(filler, "a")
    try {
      for (let toWrite = freeBytes() - leaveBytes; toWrite > 0; toWrite -= chunk.length) {
        fs.writeSync(fd, chunk, 0, Math.min(chunk.length, toWrite))
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error
    } finally {
      fs.closeSync(fd)
    }
  }
  return { dir, freeBytes, fill, unfill: () => fs.rmSync(filler, { force: true }), release }
}
