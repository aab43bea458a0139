/** `--validate-and-exit`: the configuration's problems as start-up prints them (and its warnings), or nothing */
import * as Effect from "effect/Effect"
import { logConfigWarnings } from "../configLoader.ts"
import { LoggingLive } from "../logging.ts"
import { configFromFlags, type SharedFlags } from "./configuration.ts"

export const validate = (flags: SharedFlags) =>
  configFromFlags(flags).pipe(Effect.flatMap(({ warnings }) => logConfigWarnings(warnings)), Effect.provide(LoggingLive(flags.logFormat)))
