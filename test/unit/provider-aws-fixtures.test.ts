/**
 * The `aws_bedrock` and `aws_sagemaker` codecs replayed on their recorded fixtures
 * (`src/providers/aws/fixtures/`, `bedrock-*` and `sagemaker-*`), without their authorizer
 * (signing is tested apart). A stream fixture is AWS's binary event stream written out as JSON:
 * Bedrock's messages, or a SageMaker container's SSE and the size of the `PayloadPart`s that
 * relay it; the suite replays its bytes cut at many sizes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, it } from "vitest"
import { bedrockCodec } from "../../src/providers/aws/bedrock.ts"
import { encodeEvent } from "../../src/providers/aws/eventStream.ts"
import { sageMakerCodec } from "../../src/providers/aws/sagemaker.ts"
import type { WireCodec } from "../../src/providers/codec.ts"
import { cut, fixtureSuite, type ReplayedStream } from "../support/codecFixtureSuite.ts"

const fixturesDir = path.join(import.meta.dirname, "../../src/providers/aws/fixtures")
const names = (kind: string) => fs.readdirSync(path.join(fixturesDir, kind)).filter((file) => file.endsWith(".json")).map((file) => file.slice(0, -5)).sort()

interface EventStreamFixture {
  readonly description: string
  readonly chunks: ReplayedStream["chunks"]
  readonly failure?: string
  /** Bedrock: the messages of the event stream */
  readonly messages?: ReadonlyArray<{ readonly eventType: string; readonly messageType?: "event" | "exception"; readonly payload: unknown }>
  /** SageMaker: the container's SSE, relayed in `PayloadPart`s of `payloadBytes` bytes, then maybe an exception */
  readonly sse?: string
  readonly payloadBytes?: number
  readonly exception?: { readonly eventType: string; readonly payload: unknown }
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => new Uint8Array(Buffer.concat(parts))

/** a stream fixture as AWS sends it; each chunk's raw text is an event's payload (Bedrock) or an SSE event's data (SageMaker) */
const replayed = (fixture: EventStreamFixture): ReplayedStream => {
  const base = { description: fixture.description, chunks: fixture.chunks, failure: fixture.failure }
  if (fixture.messages !== undefined) {
    const payloads = fixture.messages.map((message) => JSON.stringify(message.payload))
    return {
      ...base,
      bytes: concat(fixture.messages.map((message, i) =>
        encodeEvent({ eventType: message.eventType, messageType: message.messageType, payload: payloads[i] })
      )),
      expectRaw: (raw) => expect(payloads).toContain(raw)
    }
  }
  const sse = fixture.sse ?? ""
  const parts = cut(new TextEncoder().encode(sse), fixture.payloadBytes ?? 1).map((part) => encodeEvent({ eventType: "PayloadPart", payload: part }))
  if (fixture.exception !== undefined) {
    parts.push(encodeEvent({ eventType: fixture.exception.eventType, messageType: "exception", payload: JSON.stringify(fixture.exception.payload) }))
  }
  return { ...base, bytes: concat(parts), expectRaw: (raw) => expect(sse).toContain(`data: ${raw}\n`) }
}

const eventStreams = (): ReadonlyArray<readonly [string, ReplayedStream]> =>
  names("streams").map((name) => [name, replayed(JSON.parse(fs.readFileSync(path.join(fixturesDir, "streams", `${name}.json`), "utf8")))])

/** the codec without its authorizer: the request as built, before signing */
const unsigned = <S, T, E>(codec: WireCodec<S, T, E>): WireCodec<S, T, E> => ({ ...codec, authorizer: undefined })

const common = {
  model: "",
  apiKey: undefined,
  streamType: "application/vnd.amazon.eventstream",
  streams: eventStreams,
  // whole, byte by byte, and cut across headers, payloads and checksums
  pieceSizes: (bytes: Uint8Array) => [bytes.length, 1, 3, 13, 64]
} as const

fixtureSuite("aws", unsigned(bedrockCodec), {
  ...common,
  label: "aws (bedrock)",
  only: (name) => name.startsWith("bedrock-"),
  settings: { model_id: "anthropic.claude-3-5-sonnet-20240620-v1:0", region: "us-east-1" },
  modelName: "claude",
  providerName: "bedrock"
})

fixtureSuite("aws", unsigned(sageMakerCodec), {
  ...common,
  label: "aws (sagemaker)",
  only: (name) => name.startsWith("sagemaker-"),
  settings: { endpoint_name: "my-llama-endpoint", hosted_provider: "openai", region: "us-east-1" },
  modelName: "llama",
  providerName: "sagemaker"
})

it("every aws fixture is replayed by one of the two codecs", () => {
  for (const kind of ["requests", "responses", "streams", "counts"]) {
    expect(names(kind).filter((name) => !/^(bedrock|sagemaker)-/.test(name))).toEqual([])
  }
})
