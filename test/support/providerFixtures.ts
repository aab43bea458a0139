/**
 * The recorded fixtures of a provider codec (`src/providers/<type>/fixtures/`), read for the
 * codec's unit tests and served by the fake providers of the integration tests:
 * - `requests/<name>.json`: a `ModelRequest` and the call around it, and the HTTP request the
 *   gateway must send for it (URL, headers, body: compared to the byte);
 * - `responses/<name>.json`: an answer (status and body) and what the gateway reads from it
 *   (`parsed`), or the message of the failure it makes of it (`failure`);
 * - `streams/<name>.sse`: a streamed answer as the provider frames it, and `streams/<name>.json`
 *   the chunks read from it (without their raw text) and the failure that ends it, if any;
 * - `counts/<name>.json` (codecs that count tokens): a `ModelRequest` and its call, the HTTP
 *   request of its token count, the provider's answer and the count read from it (or the
 *   failure: without `http` when nothing is sent).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { ExtraBodyEdit, ExtraHeaderEdit } from "../../src/inference/extraBody.ts"
import type { ModelRequest, ProviderChunk } from "../../src/inference/types.ts"
import type { CallerContext, ParsedResponse } from "../../src/providers/codec.ts"

const providersDir = path.join(import.meta.dirname, "../../src/providers")

export interface RequestFixture {
  readonly description: string
  readonly call: {
    readonly model: string
    readonly stream: boolean
    /** absent where the provider signs its requests instead (AWS) */
    readonly apiKey?: string
    /** the provider table's settings for this call, where they differ per fixture (AWS) */
    readonly settings?: unknown
    readonly modelName: string
    readonly providerName: string
    readonly extraBody: ReadonlyArray<ExtraBodyEdit>
    readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
    /** what the request brings besides the model call (`CallerContext`): its edits follow `extraBody`/`extraHeaders`, the provider's own */
    readonly caller?: CallerContext
  }
  /** a `ModelRequest` whose tools have no validator (the codec never uses it) */
  readonly request: ModelRequest
  readonly http: { readonly url: string; readonly headers: Record<string, string>; readonly body: unknown }
}

export interface ResponseFixture {
  readonly description: string
  readonly status: number
  readonly body: unknown
  readonly parsed?: ParsedResponse
  readonly failure?: string
}

export interface CountFixture {
  readonly description: string
  readonly call: Omit<RequestFixture["call"], "stream" | "caller">
  readonly request: ModelRequest
  readonly http?: RequestFixture["http"]
  readonly answer?: { readonly status: number; readonly body: unknown }
  readonly count?: number
  readonly failure?: string
}

export interface StreamFixture {
  readonly description: string
  readonly transcript: string
  readonly chunks: ReadonlyArray<Omit<ProviderChunk, "raw">>
  readonly failure?: string
}

const fixturesDir = (type: string) => path.join(providersDir, type, "fixtures")

const names = (type: string, kind: string, ending: string) =>
  fs.readdirSync(path.join(fixturesDir(type), kind)).filter((file) => file.endsWith(ending)).map((file) => file.slice(0, -ending.length)).sort()

const readJson = (type: string, file: string) => JSON.parse(fs.readFileSync(path.join(fixturesDir(type), file), "utf8"))

export const requestFixtures = (type: string): ReadonlyArray<[string, RequestFixture]> =>
  names(type, "requests", ".json").map((name) => [name, readJson(type, `requests/${name}.json`)])

export const responseFixture = (type: string, name: string): ResponseFixture => readJson(type, `responses/${name}.json`)

export const responseFixtures = (type: string): ReadonlyArray<[string, ResponseFixture]> =>
  names(type, "responses", ".json").map((name) => [name, responseFixture(type, name)])

/** none for a codec without the folder (it counts no tokens) */
export const countFixtures = (type: string): ReadonlyArray<[string, CountFixture]> =>
  fs.existsSync(path.join(fixturesDir(type), "counts")) ? names(type, "counts", ".json").map((name) => [name, readJson(type, `counts/${name}.json`)]) : []

export const streamFixture = (type: string, name: string): StreamFixture => ({
  ...readJson(type, `streams/${name}.json`),
  transcript: fs.readFileSync(path.join(fixturesDir(type), `streams/${name}.sse`), "utf8")
})

export const streamFixtures = (type: string): ReadonlyArray<[string, StreamFixture]> =>
  names(type, "streams", ".sse").map((name) => [name, streamFixture(type, name)])
