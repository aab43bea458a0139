/**
 * `gateway import-tensorzero --copy-files`: an input file TensorZero kept in its object storage
 * (a folder here) is copied into this gateway's `[object_storage]` at the same key, and the
 * imported inference points there; an inference whose file TensorZero's storage no longer holds
 * is skipped and reported with the file; without `--copy-files` the pointers are imported as
 * they are; and the flag needs a configuration naming a storage.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { runGateway, writeFiles } from "../support/gateway.ts"
import { queryDatabase } from "../support/databases.ts"
import { createTensorZeroPostgres, runStatements, uuidv7 } from "../support/tensorzeroPostgres.ts"

const start = Date.UTC(2026, 2, 11, 9, 0, 0)
const kept = uuidv7(start, 1)
const lost = uuidv7(start + 1000, 2)
const episode = uuidv7(start, 3)
const bytes = Buffer.from("\x89PNG pretend image")

const fileBlock = (folder: string, key: string) => ({
  type: "file",
  source_url: null,
  mime_type: "image/png",
  storage_path: { kind: { type: "filesystem", path: folder }, path: key }
})

const insertInference = (id: string, folder: string, key: string) => {
  const at = `(timestamptz 'epoch' + interval '1 millisecond' * ${parseInt(id.replaceAll("-", "").slice(0, 12), 16)})`
  const input = JSON.stringify({ messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, fileBlock(folder, key)] }] })
  return [
    `INSERT INTO tensorzero.chat_inferences (id, function_name, variant_name, episode_id, processing_time_ms, ttft_ms, tags, created_at)
      VALUES ('${id}', 'describe', 'v1', '${episode}', 10, NULL, '{}', ${at})`,
    `INSERT INTO tensorzero.chat_inference_data (id, input, output, inference_params, extra_body, dynamic_tools, dynamic_provider_tools, created_at)
      VALUES ('${id}', '${input.replaceAll("'", "''")}'::jsonb, '[{"type":"text","text":"an image"}]'::jsonb, '{}', '[]', '[]', '[]', ${at})`
  ]
}

describe("import-tensorzero --copy-files", () => {
  let source: TestDatabase
  let destination: TestDatabase
  let theirs: string
  let ours: string
  let configDir: string

  beforeAll(async () => {
    ;[source, destination] = await Promise.all([freshDatabase("postgres"), freshDatabase("postgres")])
    await createTensorZeroPostgres(source)
    theirs = fs.mkdtempSync(path.join(os.tmpdir(), "tz-files-"))
    ours = fs.mkdtempSync(path.join(os.tmpdir(), "gw-files-"))
    fs.mkdirSync(path.join(theirs, "observability/files"), { recursive: true })
    fs.writeFileSync(path.join(theirs, "observability/files/kept.png"), bytes)
    await runStatements(source.url, [...insertInference(kept, theirs, "observability/files/kept.png"), ...insertInference(lost, theirs, "observability/files/lost.png")])
    configDir = writeFiles({ "config.toml": `[object_storage]\ntype = "filesystem"\npath = "${ours}"\n` })
  }, 60_000)

  afterAll(async () => {
    await Promise.all([source?.drop(), destination?.drop()])
    for (const folder of [theirs, ours, configDir]) if (folder !== undefined) fs.rmSync(folder, { recursive: true, force: true })
  })

  const storedInput = async (id: string) => {
    const [row] = await queryDatabase(destination, `SELECT input FROM chat_inference WHERE id = '${id}'`)
    return row?.input
  }

  it("needs a configuration with [object_storage]", async () => {
    const result = await runGateway(["import-tensorzero", "--from", source.url, "--to", destination.url, "--copy-files"], { timeoutMs: 60_000 })
    expect(result.code).toBe(1)
    expect(result.stderr + result.stdout).toContain("--copy-files: the configuration (--config-file) has no [object_storage]")
  })

  it("copies the file into this gateway's storage and points the inference there; a file gone from TensorZero's storage skips its row", async () => {
    const result = await runGateway(
      ["import-tensorzero", "--from", source.url, "--to", destination.url, "--copy-files", "--config-file", path.join(configDir, "config.toml")],
      { timeoutMs: 60_000 }
    )
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(fs.readFileSync(path.join(ours, "observability/files/kept.png"))).toEqual(bytes)
    const input = await storedInput(kept)
    expect(input.messages[0].content[1]).toMatchObject({ file_type: "object_storage", storage_path: { kind: { type: "filesystem", path: ours }, path: "observability/files/kept.png" } })
    expect(result.stdout).toMatch(/inferences: 1 × an input file cannot be copied \(--copy-files\)/)
    expect(result.stdout).toContain(`${lost}: observability/files/lost.png is not in TensorZero's storage (filesystem)`)
    expect(await storedInput(lost)).toBeUndefined()
  })

  it("without --copy-files, imports the pointers as they are", async () => {
    const other = await freshDatabase("postgres")
    try {
      const result = await runGateway(["import-tensorzero", "--from", source.url, "--to", other.url], { timeoutMs: 60_000 })
      expect(result.code, result.stderr + result.stdout).toBe(0)
      const [row] = await queryDatabase(other, `SELECT input FROM chat_inference WHERE id = '${lost}'`)
      expect(row.input.messages[0].content[1].storage_path).toEqual({ kind: { type: "filesystem", path: theirs }, path: "observability/files/lost.png" })
    } finally {
      await other.drop()
    }
  })
})
