/**
 * `[object_storage]` on the real `gateway` command in front of a fake OpenAI: an input file
 * is written to the storage (a folder, or a real S3-compatible server) before its inference is
 * stored, the stored input keeps its `storage_path` and no data, and that input sent back is
 * read from the storage so that the provider gets the original bytes. `disabled` writes
 * nothing; a storage that fails keeps the file inline in the stored input.
 */
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type FakeS3, s3Keys, startFakeS3 } from "../support/fakeS3.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, waitForInference } from "../support/observability.ts"

const configOf = (apiBase: string, objectStorage: string) => `
${observabilityToml()}

${objectStorage}

[models.vision]
routing = ["p"]
[models.vision.providers.p]
type = "openai"
model_name = "gpt-4o"
api_base = "${apiBase}"
api_key_location = "none"

[functions.describe]
type = "chat"
[functions.describe.variants.v]
type = "chat_completion"
model = "vision"

[functions.describe_batch]
type = "chat"
[functions.describe_batch.variants.v]
type = "chat_completion"
model = "dummy::hello"
`

/** a small PNG-looking file: its signature, then random bytes */
const image = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(300)])
const imageBase64 = image.toString("base64")
const expectedPath = `observability/files/${createHash("sha256").update(imageBase64).digest("hex")}.png`

const imageInput = (file: Record<string, unknown>) => ({
  messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "file", ...file }] }]
})
const base64Input = imageInput({ file_type: "base64", data: imageBase64, mime_type: "image/png" })
/** the image kept in object storage (by default at the path written for it), as a stored input names it */
const storedImageBlock = (kind: Record<string, unknown>, path = expectedPath) =>
  ({ type: "file", file_type: "object_storage", mime_type: "image/png", storage_path: { kind, path } })
/** an input naming a PNG kept in object storage */
const storedImageInput = (kind: Record<string, unknown>, path: string) => imageInput(storedImageBlock(kind, path))

/** the data URL of the image the provider was last sent */
const sentImage = (openai: FakeOpenAi): string => {
  const request = openai.requests.at(-1)!
  const parts = request.body.messages.at(-1).content as Array<any>
  return parts.find((part) => part.type === "image_url").image_url.url
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** the stored file block of the inference's input */
const storedFile = (stored: any) => stored.input.messages[0].content[1]

describe("object storage", () => {
  let openai: FakeOpenAi
  let database: TestDatabase
  let folder: string
  const gateways: Array<RunningGateway> = []
  const start = async (objectStorage: string, env: Record<string, string> = {}) => {
    const gateway = await startGateway({ config: configOf(openai.apiBase, objectStorage), env: { GATEWAY_ANALYTICS_DB_URL: database.url, ...env } })
    gateways.push(gateway)
    return gateway
  }

  beforeAll(async () => {
    openai = await startFakeOpenAi()
    database = await freshDatabase("postgres")
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-files-"))
  })

  afterAll(async () => {
    for (const gateway of gateways) await gateway.stop()
    await openai?.close()
    await database?.drop()
    fs.rmSync(folder, { recursive: true, force: true })
  })

  describe("filesystem", () => {
    let gateway: RunningGateway
    let storage: string
    beforeAll(async () => {
      storage = path.join(folder, "fs")
      gateway = await start(`[object_storage]\ntype = "filesystem"\npath = "${storage}"`)
    })

    it("writes the file, stores its storage_path without data, and an input naming it sends the provider the original bytes", async () => {
      const answer = await gateway.post("/inference", { function_name: "describe", input: base64Input })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      const stored = await waitForInference(gateway, answer.body.inference_id)

      expect(fs.readFileSync(path.join(storage, expectedPath)).equals(image)).toBe(true)
      expect(storedFile(stored)).toEqual(storedImageBlock({ type: "filesystem", path: storage }))
      expect(JSON.stringify(stored.input)).not.toContain(imageBase64.slice(0, 40))

      // the stored input sent back as it was read: the provider gets the bytes from the folder
      openai.reset()
      const again = await gateway.post("/inference", { function_name: "describe", input: stored.input })
      expect(again.status, JSON.stringify(again.body)).toBe(200)
      expect(sentImage(openai)).toBe(`data:image/png;base64,${imageBase64}`)
      // ... and its own stored input names the same object
      const storedAgain = await waitForInference(gateway, again.body.inference_id)
      expect(storedFile(storedAgain).storage_path.path).toBe(expectedPath)
    })

    it("the model call's record names where the file is instead of carrying its bytes, also for a file read back", async () => {
      const placeholder = `<file stored at ${expectedPath}>`
      const source = { kind: "object_storage", mimeType: "image/png", storagePath: { kind: { type: "filesystem", path: storage }, path: expectedPath } }
      const first = await gateway.post("/inference", { function_name: "describe", input: base64Input })
      expect(first.status).toBe(200)
      const stored = await waitForInference(gateway, first.body.inference_id, { include_model_inferences: true })
      const again = await gateway.post("/inference", { function_name: "describe", input: stored.input })
      expect(again.status).toBe(200)
      const storedAgain = await waitForInference(gateway, again.body.inference_id, { include_model_inferences: true })
      for (const inference of [stored, storedAgain]) {
        const [call] = inference.model_inferences
        expect(call.raw_request).not.toContain(imageBase64.slice(0, 40))
        expect(JSON.parse(call.raw_request).messages[0].content[1].image_url.url).toBe(`data:image/png;base64,${placeholder}`)
        expect(call.input_messages[0].content[1]).toEqual({ type: "file", source })
      }
    })

    it("a datapoint made from the stored inference runs again with the original bytes; feedback finds the inference at once", async () => {
      const answer = await gateway.post("/inference", { function_name: "describe", input: base64Input })
      expect(answer.status).toBe(200)
      // sent as soon as the answer came, while the file may still be being written
      const feedback = await gateway.post("/feedback", { metric_name: "comment", inference_id: answer.body.inference_id, value: "a picture" })
      expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)
      await waitForInference(gateway, answer.body.inference_id)

      const made = await gateway.post("/v1/datasets/pictures/from_inferences", { type: "inference_ids", inference_ids: [answer.body.inference_id] })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      const listed = await gateway.post("/v1/datasets/pictures/list_datapoints", { function_name: "describe" })
      expect(listed.status).toBe(200)
      const [datapoint] = listed.body.datapoints
      expect(datapoint.input.messages[0].content[1]).toMatchObject({ file_type: "object_storage", storage_path: { path: expectedPath } })

      openai.reset()
      const again = await gateway.post("/inference", { function_name: "describe", input: datapoint.input, stream: true })
      expect(again.status).toBe(200)
      expect(sentImage(openai)).toBe(`data:image/png;base64,${imageBase64}`)
    })

    it("the OpenAI-compatible endpoint, streamed: the data URL's file is written and stored by path", async () => {
      const other = Buffer.concat([image, Buffer.from("other")])
      const response = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "gateway::function_name::describe",
          stream: true,
          messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/jpeg;base64,${other.toString("base64")}` } }] }]
        })
      })
      expect(response.status).toBe(200)
      const text = await response.text()
      const id = JSON.parse(text.split("\n").find((line) => line.startsWith("data: {"))!.slice(6)).id as string
      const stored = await waitForInference(gateway, id)
      const block = stored.input.messages[0].content[0]
      const hash = createHash("sha256").update(other.toString("base64")).digest("hex")
      expect(block).toMatchObject({ file_type: "object_storage", mime_type: "image/jpeg", storage_path: { path: `observability/files/${hash}.jpg` } })
      expect(fs.readFileSync(path.join(storage, block.storage_path.path)).equals(other)).toBe(true)
    })

    it("an object that is not there, or another storage: a 400 naming the field", async () => {
      const missing = storedImageInput({ type: "filesystem", path: storage }, "observability/files/absent.png")
      const absent = await gateway.post("/inference", { function_name: "describe", input: missing })
      expect(absent.status).toBe(400)
      expect(absent.body.error).toContain("input.messages[0].content[1].storage_path.path")
      expect(absent.body.error).toContain("observability/files/absent.png")

      const elsewhere = storedImageInput({ type: "filesystem", path: "/somewhere/else" }, expectedPath)
      const other = await gateway.post("/inference", { function_name: "describe", input: elsewhere })
      expect(other.status).toBe(400)
      expect(other.body.error).toContain("input.messages[0].content[1].storage_path.kind")

      const escaping = storedImageInput({ type: "filesystem", path: storage }, "../../etc/passwd")
      const escaped = await gateway.post("/inference", { function_name: "describe", input: escaping })
      expect(escaped.status).toBe(400)
      expect(escaped.body.error).toContain("storage_path.path")
    })
  })

  it("disabled: nothing is written, the stored block's storage_path has kind disabled and no data", async () => {
    const gateway = await start(`[object_storage]\ntype = "disabled"`)
    const answer = await gateway.post("/inference", { function_name: "describe", input: base64Input })
    expect(answer.status).toBe(200)
    const stored = await waitForInference(gateway, answer.body.inference_id)
    expect(storedFile(stored)).toEqual(storedImageBlock({ type: "disabled" }))
    expect(fs.readdirSync(folder)).not.toContain("observability")
  })

  it("absent: files stay inline in the stored input, as before", async () => {
    const gateway = await start("")
    const answer = await gateway.post("/inference", { function_name: "describe", input: base64Input })
    expect(answer.status).toBe(200)
    const stored = await waitForInference(gateway, answer.body.inference_id)
    expect(storedFile(stored)).toEqual({ type: "file", file_type: "base64", data: imageBase64, mime_type: "image/png" })
  })

  it("batch inference: files written before the batch is stored, kept by path, and read back for an object_storage input", async () => {
    const storage = path.join(folder, "batch")
    const gateway = await start(`[object_storage]\ntype = "filesystem"\npath = "${storage}"\n[gateway.batch]\npoll_interval_s = 0`, {
      GATEWAY_RELATIONAL_DB_URL: database.url
    })
    const submitted = await gateway.post("/batch_inference", { function_name: "describe_batch", inputs: [base64Input] })
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200)
    expect(fs.readFileSync(path.join(storage, expectedPath)).equals(image)).toBe(true)
    const read = await gateway.get(`/batch_inference/${submitted.body.batch_id}`)
    expect(read.body.status, JSON.stringify(read.body)).toBe("completed")
    const [id] = submitted.body.inference_ids
    const stored = await waitForInference(gateway, id, { include_model_inferences: true })
    expect(storedFile(stored)).toEqual(storedImageBlock({ type: "filesystem", path: storage }))
    expect(stored.model_inferences[0].raw_request).not.toContain(imageBase64.slice(0, 40))

    // the stored input in a batch of its own: the file is read back (a missing one is a 400 naming the input)
    const again = await gateway.post("/batch_inference", { function_name: "describe_batch", inputs: [stored.input] })
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    const missing = storedImageInput({ type: "filesystem", path: storage }, "observability/files/absent.png")
    const refused = await gateway.post("/batch_inference", { function_name: "describe_batch", inputs: [base64Input, missing] })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toContain("inputs[1]")
    expect(refused.body.error).toContain("observability/files/absent.png")
  })

  describe("s3_compatible", () => {
    let s3: FakeS3
    beforeAll(async () => {
      s3 = await startFakeS3()
    })
    afterAll(async () => {
      await s3?.close()
    })

    it("writes the object to the bucket and reads it back for an object_storage block", async () => {
      // the bucket, made by the test through the S3 API
      const created = await fetch(`${s3.endpoint}/files`, { method: "PUT" })
      expect(created.status).toBe(200)
      const table = `[object_storage]\ntype = "s3_compatible"\nbucket_name = "files"\nregion = "us-east-1"\nendpoint = "${s3.endpoint}"\nallow_http = true`
      const gateway = await start(table, s3Keys)
      const answer = await gateway.post("/inference", { function_name: "describe", input: base64Input })
      expect(answer.status).toBe(200)
      const stored = await waitForInference(gateway, answer.body.inference_id)
      expect(storedFile(stored)).toEqual(
        storedImageBlock({ type: "s3_compatible", bucket_name: "files", region: "us-east-1", endpoint: s3.endpoint, allow_http: true })
      )
      const object = await fetch(`${s3.endpoint}/files/${expectedPath}`)
      expect(object.status).toBe(200)
      expect(Buffer.from(await object.arrayBuffer()).equals(image)).toBe(true)

      openai.reset()
      const again = await gateway.post("/inference", { function_name: "describe", input: stored.input })
      expect(again.status, JSON.stringify(again.body)).toBe(200)
      expect(sentImage(openai)).toBe(`data:image/png;base64,${imageBase64}`)
    })

    it("a slow storage: the answer does not wait for it, and feedback sent at once finds the inference", async () => {
      // an S3 endpoint that takes longer to accept an object than feedback looks for an inference in the database (~1.5 s)
      const slow = http.createServer((request, response) => {
        request.resume()
        request.on("end", () => setTimeout(() => response.writeHead(200, { etag: '"x"' }).end(), 2_500))
      })
      await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve))
      try {
        const port = (slow.address() as net.AddressInfo).port
        const table = `[object_storage]\ntype = "s3_compatible"\nbucket_name = "files"\nendpoint = "http://127.0.0.1:${port}"\nallow_http = true`
        const gateway = await start(table, s3Keys)
        const started = Date.now()
        const answer = await gateway.post("/inference", { function_name: "describe", input: base64Input })
        expect(answer.status).toBe(200)
        // the write takes 2.5 s
        expect(Date.now() - started).toBeLessThan(2_000)
        const feedback = await gateway.post("/feedback", { metric_name: "comment", inference_id: answer.body.inference_id, value: "at once" })
        expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)
        // (found as if queued: asking the database again for ~1.5 s would not find it before the write ends)
        const stored = await waitForInference(gateway, answer.body.inference_id)
        expect(storedFile(stored)).toMatchObject({ file_type: "object_storage", storage_path: { path: expectedPath } })
      } finally {
        slow.close()
        slow.closeAllConnections()
      }
    })

    it("the server down: the inference answers 200 and the stored input keeps the file inline", async () => {
      const closed = await freePort()
      const table = `[object_storage]\ntype = "s3_compatible"\nbucket_name = "files"\nendpoint = "http://127.0.0.1:${closed}"\nallow_http = true`
      const gateway = await start(table, s3Keys)
      const answer = await gateway.post("/inference", { function_name: "describe", input: base64Input })
      expect(answer.status).toBe(200)
      const stored = await waitForInference(gateway, answer.body.inference_id)
      expect(storedFile(stored)).toEqual({ type: "file", file_type: "base64", data: imageBase64, mime_type: "image/png" })
      expect(gateway.log()).toContain("could not write the input file")
    })
  })
})
