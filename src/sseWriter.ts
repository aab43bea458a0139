/**
 * Writing Server-Sent Events, the framing of the gateway's streamed answers (`/inference`'s and
 * the OpenAI surface's): one `data:` event per JSON payload, OpenAI's `[DONE]` end marker, and a
 * body written a batch at a time. Reading a provider's events is src/providers/sse.ts.
 */
import type * as Arr from "effect/Array"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

export const sseEvent = (json: string): string => `data: ${json}\n\n`
export const sseDone = "data: [DONE]\n\n"
/** a named event (`event: <name>`), as Anthropic's Messages and OpenAI's Responses streams frame theirs */
export const sseNamedEvent = (name: string, json: string): string => `event: ${name}\ndata: ${json}\n\n`

const textEncoder = new TextEncoder()

/**
 * The body of a stream whose pulls each bring what one read of the provider brought
 * (src/streams.ts): the events of one pull, as `eventsOf` writes them, are encoded once and
 * sent as one write; a pull whose events are empty sends nothing.
 */
export const sseWrites = <A>(
  items: Stream.Stream<A>,
  eventsOf: (batch: Arr.NonEmptyReadonlyArray<A>) => string
): Stream.Stream<Uint8Array> =>
  Stream.transformPull(items, (pull) => {
    const next: Effect.Effect<readonly [Uint8Array], Cause.Done> = Effect.flatMap(pull, (batch) => {
      const text = eventsOf(batch)
      return text === "" ? next : Effect.succeed([textEncoder.encode(text)] as const)
    })
    return Effect.succeed(next)
  })
