/**
 * The browser the UI's tests drive: Debian's `chromium` package, installed when missing (needs
 * root, as on the CI machines), driven by playwright-core (which downloads no browser of its own).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"

export const chromiumBin = "/usr/bin/chromium"

export const ensureChromium = (): string => {
  if (fs.existsSync(chromiumBin)) return chromiumBin
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  execFileSync("apt-get", ["update"], { stdio: ["ignore", "ignore", "inherit"], env })
  execFileSync("apt-get", ["install", "-y", "chromium"], { stdio: ["ignore", "ignore", "inherit"], env })
  if (!fs.existsSync(chromiumBin)) throw new Error(`apt-get installed chromium but ${chromiumBin} is missing`)
  return chromiumBin
}
