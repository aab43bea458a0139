/**
 * The dummy provider's fixed answers. TensorZero's (`providers/dummy.rs` in its repository)
 * come first, word for word: its users' test suites assert them. The gateway's own models
 * (`hello`, `offered_tool`, ...) answer the texts at the end.
 */
import type { Usage } from "../../inference/types.ts"

/** TensorZero's answer to `good` and to any model name it does not know, whole */
export const dummyText =
  "Megumin gleefully chanted her spell, unleashing a thunderous explosion that lit up the sky and left a massive crater in its wake."
/** `alternate` */
export const dummyAlternateText = "Megumin chanted her spell, but instead of an explosion, a gentle rain began to fall."
/** the thought of `reasoner`, `reasoner_with_signature` and `json_reasoner`, whole */
export const dummyThought = "hmmm"
export const dummyThoughtSignature = "my_signature"

export const dummyJson = "{\"answer\":\"Hello\"}"
export const dummyJsonGoodbye = "{\"answer\":\"Goodbye\"}"
export const dummyJsonCot = "{\"thinking\":\"hmmm\", \"response\": {\"answer\":\"tokyo!\"}}"
export const dummyJsonDiffSchema = "{\"response\":\"Hello\"}"

/** the tool TensorZero's tool models call (`good_tool`'s whole answer calls `output_schema_tool`) */
export const dummyToolName = "get_temperature"
export const dummyGoodToolName = "output_schema_tool"
export const dummyToolArguments = "{\"location\":\"Brooklyn\",\"units\":\"celsius\"}"
/** `bad_tool`: `units` capitalized, which the enum of `get_temperature`'s schema refuses */
export const dummyBadToolArguments = "{\"location\":\"Brooklyn\",\"units\":\"Celsius\"}"
export const dummyGoodToolArguments = "{\"sentiment\":\"positive\",\"confidence\":0.95}"
export const dummyInvalidToolArguments = "Not valid 'JSON'"

/** what every streamed answer that is not a tool call, json or a reasoner's streams: 16 pieces */
export const dummyStreamedPieces: ReadonlyArray<string> = [
  "Wally,",
  " the",
  " golden",
  " retriever,",
  " wagged",
  " his",
  " tail",
  " excitedly",
  " as",
  " he",
  " devoured",
  " a",
  " slice",
  " of",
  " cheese",
  " pizza."
]
export const dummyStreamedThoughtPieces: ReadonlyArray<string> = ["hmmm", "hmmm"]
export const dummyStreamedToolPieces: ReadonlyArray<string> = ["{\"location\"", ":\"Brooklyn\"", ",\"units\"", ":\"celsius", "\"}"]
export const dummyStreamedGoodToolPieces: ReadonlyArray<string> = ["{\"sentiment\"", ":\"positive\"", ",\"confidence\"", ":0.95", "}"]
/** what `json` and `json_reasoner` stream (not their whole answer) */
export const dummyStreamedJsonPieces: ReadonlyArray<string> = ["{\"name\"", ":\"John\"", ",\"age\"", ":30", "}"]

/** the time between two streamed chunks, as TensorZero's dummy spaces them */
export const dummyChunkSpacingMs = 10
/** `slow`: the time before it answers or starts its stream */
export const dummySlowDelayMs = 5_000
/** `slow_second_chunk`: the wait before its second chunk */
export const dummySlowSecondChunkMs = 2_000

/** the key `test_key` accepts */
export const dummyGoodKey = "good_key"

/** the length of every embedding, whatever the request's `dimensions` */
export const dummyEmbeddingLength = 1536
export const dummyEmbeddingUsage: Usage = { input_tokens: 10, output_tokens: 0 }

// The gateway's own models, which keep the usage and the pieces they always had.

/** `hello`, `offered_tool`'s fallback text, `flaky`, `delay_500ms`, `stream_error` */
export const dummyHelloText = "Hello from the dummy provider. This answer is always the same."
export const dummyHelloUsage: Usage = { input_tokens: 10, output_tokens: 10 }
/** the length of the text pieces the gateway's own models stream in */
export const dummyHelloPieceLength = 12
/** `delay_500ms` */
export const dummyDelayMs = 500
