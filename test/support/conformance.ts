/**
 * The cross-provider conformance contract: every provider type runs the same table of
 * scenarios through a running gateway against its own local fake (test/conformance/*.ts, one
 * `ConformanceSubject` per provider type, run by test/integration/provider-conformance.test.ts).
 *
 * How a fake knows what to answer: the conformance test puts the marker `conformance:<scenario>`
 * in the user message's text; the fake finds it anywhere in the request body (the body's JSON
 * text includes it) and answers that scenario in its provider's real wire format. It also checks
 * what the scenario needs the request to carry (tools in its format, the schema in its native
 * structured-output field, the image, the thought's signature sent back) and answers an error
 * in its own format (status 400, message "conformance: <what is missing>") when it is absent,
 * so a codec that drops something fails the test with a message saying what.
 *
 * The canonical answers (what the gateway must return, whatever the provider):
 * - `text`: the text "conformance text" (finish reason stop).
 * - `stream`: a streamed request; the text "conformance text" in at least two text deltas.
 * - `tool_call`: the request offers the tool `get_weather` (parameters `{city: string}`) with
 *   tool_choice auto; the answer is one tool call, id "call_1", name "get_weather", arguments
 *   `{"city":"Paris"}` (finish reason tool_call).
 * - `parallel_tool_calls`: two tool calls: "call_1" get_weather Paris, "call_2" get_weather London.
 * - `streamed_tool_calls`: `parallel_tool_calls` asked for as a stream, answered in the
 *   provider's streamed form (its tool calls as the provider streams them: a name once, the
 *   arguments in pieces where it cuts them). The gateway's tool-call deltas are deltas for
 *   every provider: each call's `raw_name` pieces and `raw_arguments` pieces, joined, are its
 *   name and arguments (`joinedToolCalls`), never a name repeated.
 * - `json_strict`: a json function with json_mode strict and output schema
 *   `{answer: string}`; the fake checks the schema arrived where the provider takes native
 *   structured output (or, for a provider with none, the JSON instruction it gets) and answers
 *   the text `{"answer":"conformance"}`.
 * - `json_tool`: json_mode tool; the fake checks the `respond` tool is offered and forced, and
 *   answers a call of it with arguments `{"answer":"conformance"}`.
 * - `image`: the user message holds a PNG as base64 (`conformanceImage`); the fake checks the
 *   image arrived in its format (the same base64 data) and answers the text "image received".
 * - `thought_round_trip`: first request: the fake answers a thought (text "thinking",
 *   signature "sig-conformance" where the provider has signatures; the Responses API's, an
 *   encrypted content, "gAAAAB-sig-conformance") then the text "first".
 *   Second request (the test sends the assistant's thought and text back, then a user turn with
 *   the marker `conformance:thought_round_trip_2`): a provider that takes thoughts back checks
 *   the signature arrived; the answer is the text "second".
 * - `tool_result` (a second turn, not a scenario of its own): the request sends back the call
 *   "call_1" (get_weather) the fake answered to `tool_call` (or `streamed_tool_calls`) and the
 *   tool's result for it, whose text holds the marker `conformance:tool_result`
 *   (`conformanceToolResult`); the fake checks both arrived in its format (the call on the
 *   assistant's turn, the result tied to it) and answers the text "sunny in Paris", whole or
 *   streamed as asked.
 * - `error`: the fake answers its format's error for a request that is the caller's fault
 *   (HTTP 400, message "conformance: prompt is too long"); the gateway answers 400 and its
 *   message includes "conformance: prompt is too long".
 * - `usage`: the text "conformance text" with usage input 11, output 7, cached input 3 (where
 *   the provider reports cached tokens); the gateway's usage is input 11, output 7.
 */
export const scenarios = [
  "text",
  "stream",
  "tool_call",
  "parallel_tool_calls",
  "streamed_tool_calls",
  "json_strict",
  "json_tool",
  "image",
  "thought_round_trip",
  "error",
  "usage"
] as const
export type Scenario = typeof scenarios[number]

/** the second turns of scenarios: a request holding one is for it, whatever marker comes before */
export type SecondTurn = "thought_round_trip_2" | "tool_result"

/** the marker a fake looks for: `conformance:<scenario>` (and the second turns', `conformance:thought_round_trip_2`, `conformance:tool_result`) */
export const marker = (scenario: Scenario | SecondTurn) => `conformance:${scenario}`

/** the text of the tool's result sent back in the `tool_result` turn */
export const conformanceToolResult = `${marker("tool_result")} 18 degrees and sunny`

/** the answer to the `tool_result` turn */
export const toolResultAnswer = "sunny in Paris"

const markerPattern = /conformance:([a-z0-9_]+)/

/**
 * The scenario a request body is for (a second turn first), or
 * undefined: the first marker's whole name, so that no scenario is taken for another whose
 * name begins the same (`stream`, `streamed_tool_calls`).
 */
export const scenarioOf = (body: unknown): Scenario | SecondTurn | undefined => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  if (text.includes(marker("thought_round_trip_2"))) return "thought_round_trip_2"
  if (text.includes(marker("tool_result"))) return "tool_result"
  const name = markerPattern.exec(text)?.[1]
  return scenarios.find((scenario) => scenario === name)
}

/** The tool calls of `/inference`'s streamed events: each call's `raw_name` and `raw_arguments` deltas joined, in the order the calls began. */
export const joinedToolCalls = (events: ReadonlyArray<any>): Array<{ id: string; raw_name: string; raw_arguments: string }> => {
  const calls = new Map<string, { id: string; raw_name: string; raw_arguments: string }>()
  for (const event of events) {
    for (const delta of event?.content ?? []) {
      if (delta.type !== "tool_call") continue
      const call = calls.get(delta.id) ?? { id: delta.id, raw_name: "", raw_arguments: "" }
      call.raw_name += delta.raw_name
      call.raw_arguments += delta.raw_arguments
      calls.set(delta.id, call)
    }
  }
  return [...calls.values()]
}

/** what `joinedToolCalls` gives for the `streamed_tool_calls` scenario */
export const streamedWeatherCalls = [
  { id: "call_1", raw_name: "get_weather", raw_arguments: JSON.stringify({ city: "Paris" }) },
  { id: "call_2", raw_name: "get_weather", raw_arguments: JSON.stringify({ city: "London" }) }
]

/** a 1x1 PNG, base64 */
export const conformanceImage = {
  mimeType: "image/png",
  data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
}

/** A fake server started for one subject. */
export interface RunningFake {
  /**
   * The provider table of the model under test, pointing at the fake (written as TOML by the
   * conformance test under `[models.conformance.providers.p]`): `type`, `model_name`,
   * `api_base` or the type's endpoint settings, its credential location.
   */
  readonly providerTable: Readonly<Record<string, string | number | boolean>>
  /** environment the gateway needs (the credential the fake expects) */
  readonly env: Readonly<Record<string, string>>
  /** the bodies of the requests the fake received so far, in order (what reached the provider) */
  readonly received: () => ReadonlyArray<unknown>
  /** other files the gateway needs (a service account's JSON), relative to the config folder */
  readonly files?: Readonly<Record<string, string>>
  readonly close: () => Promise<void>
}

export interface ConformanceSubject {
  /** the provider type */
  readonly type: string
  /** a name for the subject when it is not its type alone (two subjects of one type: `openai` and its Responses API) */
  readonly label?: string
  readonly start: () => Promise<RunningFake>
  /**
   * Scenarios the provider genuinely cannot do: the gateway must refuse them with an error
   * whose message includes this text (it names the provider type and the feature); the
   * table of docs/providers.md (What each type does) says so too.
   */
  readonly unsupported?: Partial<Record<Scenario, string>>
}
