/**
 * How a command ends with a code of its own: its lines on stderr, then an `ExitWith` defect that
 * the command's teardown (bin/gateway.ts) turns into the process's exit code.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"

/** Ends the process with `code` after `lines` went to stderr. */
export class ExitWith extends Error {
  readonly code: number
  constructor(code: number) {
    super(`exit ${code}`)
    this.code = code
  }
}

export const failWith = (code: number, lines: ReadonlyArray<string>) =>
  Effect.flatMap(Console.error(lines.join("\n")), () => Effect.die(new ExitWith(code)))
