/** A problem that stops the gateway (or a one-shot command) from starting, said in one line. */
import * as Schema from "effect/Schema"

export class StartupError extends Schema.TaggedError<StartupError>()("StartupError", {
  message: Schema.String
}) {}
