/**
 * The memory of a gateway process as V8 reports it after a full garbage collection, read through
 * the process's inspector (started with `--inspect=127.0.0.1:0` in NODE_OPTIONS: the gateway
 * prints the inspector's address on stderr), and its resident and virtual size from /proc. For
 * suites about memory that must be released (test/integration/hardening-reload.test.ts): the
 * process is observed from outside, it offers no route of its own for it.
 */
import * as fs from "node:fs"
import type { RunningGateway } from "./gateway.ts"

export interface ProcessMemory {
  /** V8's heap in use after a full collection, MB */
  readonly heapMB: number
  /** memory of C++ objects bound to JavaScript ones (WebAssembly memories, buffers) after it, MB */
  readonly externalMB: number
  /** resident set (VmRSS), MB */
  readonly rssMB: number
  /** address space reserved (VmSize), GB: a WebAssembly memory reserves about 8 GB of it */
  readonly vmSizeGB: number
}

export interface Inspector {
  /** collects all garbage (twice: finalizers of the first may free more), then reads the memory */
  readonly memory: () => Promise<ProcessMemory>
  readonly close: () => void
}

/** the inspector's address the process printed */
const inspectorAddress = (log: string): string => {
  const match = /Debugger listening on (ws:\/\/\S+)/.exec(log)
  if (match === null) throw new Error(`the process printed no inspector address (NODE_OPTIONS=--inspect=127.0.0.1:0?):\n${log}`)
  return match[1]
}

/** VmRSS and VmSize of `pid`, in kB */
const procStatus = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)![1])
  return { rss: kB("VmRSS"), vmSize: kB("VmSize") }
}

const round = (value: number) => Math.round(value * 10) / 10

export const connectInspector = async (gateway: RunningGateway): Promise<Inspector> => {
  const socket = new WebSocket(inspectorAddress(gateway.log()))
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve())
    socket.addEventListener("error", () => reject(new Error("cannot connect to the gateway's inspector")))
  })
  let lastId = 0
  const waiting = new Map<number, { readonly resolve: (result: any) => void; readonly reject: (error: Error) => void }>()
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } }
    const call = message.id === undefined ? undefined : waiting.get(message.id)
    if (call === undefined) return
    waiting.delete(message.id!)
    if (message.error !== undefined) call.reject(new Error(`inspector: ${message.error.message}`))
    else call.resolve(message.result)
  })
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve, reject) => {
      const id = ++lastId
      waiting.set(id, { resolve, reject })
      socket.send(JSON.stringify({ id, method, params }))
    })
  return {
    async memory() {
      await send("HeapProfiler.collectGarbage")
      await send("HeapProfiler.collectGarbage")
      const evaluated = await send("Runtime.evaluate", { expression: "JSON.stringify(process.memoryUsage())", returnByValue: true })
      const usage = JSON.parse(evaluated.result.value) as NodeJS.MemoryUsage
      const { rss, vmSize } = procStatus(gateway.process.pid!)
      return {
        heapMB: round(usage.heapUsed / 2 ** 20),
        externalMB: round(usage.external / 2 ** 20),
        rssMB: round(rss / 1024),
        vmSizeGB: round(vmSize / 2 ** 20)
      }
    },
    close: () => socket.close()
  }
}
