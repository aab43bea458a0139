// A process with a durable write-queue log (layers/durableQueue/log.ts), for the replay tests:
// appends `count` units (one row each, its text naming its number), says the first `written`
// are written, prints "ready <owner>" and waits to be killed (SIGKILL: its lock goes with it).
import { Buffer } from "node:buffer"
import { openQueueLog } from "../../layers/durableQueue/log.ts"

const [folder, count, written, segmentBytes] = process.argv.slice(2)
const log = openQueueLog({ folder, fsync: "batch", maxBytes: 1024 * 1024 * 1024, segmentBytes: Number(segmentBytes ?? 1024 * 1024), syncIntervalMs: 100 })
for (let unit = 1; unit <= Number(count); unit++) {
  log.append([{ table: "ChatInference", text: Buffer.from(JSON.stringify({ id: `unit-${unit}` })) }])
}
log.written(Number(written))
process.stdout.write(`ready ${log.owner}\n`)
process.stdin.resume()
