/**
 * A real S3-compatible server for tests: s3rver (S3's REST API over a folder), on a free
 * loopback port, with its files in a temporary folder removed on close. It accepts the keys
 * S3RVER / S3RVER.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"

interface S3rverServer {
  run(): Promise<{ readonly address: string; readonly port: number }>
  close(): Promise<void>
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverServer
// s3rver ships no types
const S3rver = createRequire(import.meta.url)("s3rver") as S3rverClass

export const s3Keys = { S3_ACCESS_KEY_ID: "S3RVER", S3_SECRET_ACCESS_KEY: "S3RVER" }

export interface FakeS3 {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string
  close(): Promise<void>
}

export const startFakeS3 = async (): Promise<FakeS3> => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-s3-"))
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory })
  const { port } = await server.run()
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      await server.close()
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }
}
