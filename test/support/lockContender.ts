// One contender for an embedded database folder's lock (layers/embedded/folderLock.ts), for the
// race tests: says "ready", spins until the file `go` exists (so that every contender tries at
// the same moment), tries once, says "Locked" or "Held", and holds what it got until its stdin
// closes; it then exits without releasing, as a process that dies does.
import * as fs from "node:fs"
import { lockFolder } from "../../layers/embedded/folderLock.ts"

const [folder, go] = process.argv.slice(2)
process.stdout.write("ready\n")
while (!fs.existsSync(go)) {
  // spin: a sleep would spread the contenders out
}
process.stdout.write(`${lockFolder(folder)._tag}\n`)
process.stdin.resume()
process.stdin.on("end", () => process.exit(0))
