/**
 * MiniJinja templates of the variants, compiled once at start-up into one environment (and
 * compiled again into a new one if a render breaks the engine, so that no request can break
 * it for the next). Variant templates live under keys of the form `<function>::<variant>::<name>`;
 * files that templates include or import (when `gateway.template_filesystem_access` is on)
 * live under the name the template uses for them. The arguments a request hands to a template
 * are bounded (`templateArgumentLimits`) before rendering.
 */
import { createRequire } from "node:module"
import type * as MiniJinja from "minijinja-js"
import { type PlainTemplate, plainTemplate, renderPlain } from "./plainTemplate.ts"

const require = createRequire(import.meta.url)

/**
 * A new instance of the MiniJinja WebAssembly module, with memory of its own. A trap inside
 * the module (a stack overflow, a Rust panic) leaves that instance unusable for good (its
 * stack pointer is never restored, the environment stays borrowed), so recovering means a
 * new instance; the module's glue keeps its instance in module state, hence a fresh load.
 */
const loadMiniJinja = (): typeof MiniJinja => {
  const path = require.resolve("minijinja-js")
  const loaded = require(path) as typeof MiniJinja
  // forgotten at once, so that the next load is a new instance and nothing but the engine keeps this one alive
  const entry = require.cache[path]
  delete require.cache[path]
  // (the module loaded by a `createRequire` function is also listed among its parent's children)
  const siblings = (entry as { parent?: { children?: Array<unknown> } } | undefined)?.parent?.children
  const index = siblings?.indexOf(entry) ?? -1
  if (index >= 0) siblings!.splice(index, 1)
  return loaded
}

/** The glue's handle on the instance's wasm-bindgen stack pointer, when this build has one. */
const stackPointerOf = (module: typeof MiniJinja): (() => number) | undefined => {
  const exports = (module as unknown as { __wasm?: { __wbindgen_add_to_stack_pointer?: (delta: number) => number } }).__wasm
  const move = exports?.__wbindgen_add_to_stack_pointer
  return move === undefined ? undefined : () => move(0)
}

export interface TemplateSource {
  readonly key: string
  readonly source: string
  /** where it came from, for error messages */
  readonly origin: string
}

export const templateKey = (functionName: string, variantName: string, templateName: string): string =>
  `${functionName}::${variantName}::${templateName}`

const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split("\n")[0].trim()

// `{% include "a" %}`, `{% import 'b' as m %}`, `{% from "c" import x %}`, `{% extends "d" %}`
const referenceTag = /\{%-?\s*(?:include|import|from|extends)\b([^%]*)%\}/g
const stringLiteral = /"([^"\\]*)"|'([^'\\]*)'/g

/** The names of other templates a template loads, as far as they are string literals. */
export const templateReferences = (source: string): ReadonlyArray<string> => {
  const names: Array<string> = []
  for (const tag of source.matchAll(referenceTag)) {
    for (const literal of tag[1].matchAll(stringLiteral)) names.push(literal[1] ?? literal[2])
  }
  return names
}

/**
 * Bounds on the arguments a request hands to a template, checked before rendering: the engine
 * converts them recursively (about 12 000 levels of nesting overflow its stack) and a large
 * argument costs time in a single synchronous call (100 000 values take ~150 ms). A real prompt
 * stays far below both: 100 000 values would render to a prompt beyond most context windows.
 */
export const templateArgumentLimits = { depth: 64, values: 100_000 } as const

/**
 * The instructions one render may execute: arguments within bounds still make a template that
 * loops over a list inside a loop over it run for hours (100 000 items: 10^10 steps), blocking
 * every other request. Rendering a list of 100 000 values once takes under a million; this many
 * take ~300 ms at most, after which the render fails with an ordinary template error.
 */
export const templateFuel = 10_000_000

/**
 * Why `args` exceed `templateArgumentLimits`, or undefined. One walk that stops at the first
 * limit crossed: it costs the size of the arguments, at most the limits.
 */
export const templateArgumentsProblem = (args: unknown): string | undefined => {
  let left = templateArgumentLimits.values
  // the arguments object is level 1; returns which limit was crossed
  const walk = (value: unknown, level: number): "depth" | "values" | undefined => {
    if (--left < 0) return "values"
    if (typeof value !== "object" || value === null) return undefined
    if (level > templateArgumentLimits.depth) return "depth"
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const crossed = walk(value[i], level + 1)
        if (crossed !== undefined) return crossed
      }
    } else {
      for (const key in value) {
        const crossed = walk((value as Record<string, unknown>)[key], level + 1)
        if (crossed !== undefined) return crossed
      }
    }
    return undefined
  }
  const crossed = walk(args, 1)
  if (crossed === "depth") return `template arguments nest deeper than ${templateArgumentLimits.depth} levels`
  if (crossed === "values") return `template arguments hold more than ${templateArgumentLimits.values} values`
  return undefined
}

/**
 * An error MiniJinja reports about a template or its arguments (a plain `Error`: an undefined
 * variable, an invalid operation, the recursion limit), after which the engine is fine; anything
 * else (a WebAssembly trap, a JavaScript stack overflow, the glue's "recursive use of an object"
 * once an earlier call trapped) means the engine is broken.
 */
const isTemplateError = (error: unknown): boolean =>
  error instanceof Error && error.constructor === Error && !error.message.startsWith("recursive use of an object")

export type RenderResult =
  | { readonly text: string }
  /** `engineFailed`: the engine itself failed (it has been rebuilt for the next request) */
  | { readonly error: string; readonly engineFailed?: true }

export class TemplateEngine {
  private module: typeof MiniJinja
  private env: MiniJinja.Environment
  private stackPointer: (() => number) | undefined
  /** the stack pointer between calls: any other value after a call means the call trapped */
  private idleStackPointer: number | undefined
  private readonly sources: ReadonlyArray<TemplateSource>
  /** the templates that only substitute variables, rendered without the engine when they can be (src/inference/plainTemplate.ts) */
  private readonly plain: ReadonlyMap<string, PlainTemplate>
  private readonly plainRendering: boolean

  private constructor(module: typeof MiniJinja, env: MiniJinja.Environment, sources: ReadonlyArray<TemplateSource>, plainRendering: boolean) {
    this.module = module
    this.env = env
    this.sources = sources
    const plain = new Map<string, PlainTemplate>()
    if (plainRendering) {
      for (const template of sources) {
        const parsed = plainTemplate(template.key, template.source)
        if (parsed !== undefined) plain.set(template.key, parsed)
      }
    }
    this.plain = plain
    this.plainRendering = plainRendering
    this.stackPointer = stackPointerOf(module)
    this.idleStackPointer = this.stackPointer?.()
  }

  /** A new environment holding `sources`, each one's syntax error (if any) passed to `onError`. */
  private static environment(
    module: typeof MiniJinja,
    sources: ReadonlyArray<TemplateSource>,
    onError: (template: TemplateSource, error: unknown) => void
  ): MiniJinja.Environment {
    const env = new module.Environment()
    env.debug = false
    // a variable missing from the arguments is an error, not an empty string
    env.undefinedBehavior = "strict"
    env.fuel = templateFuel
    for (const template of sources) {
      try {
        env.addTemplate(template.key, template.source)
      } catch (error) {
        onError(template, error)
      }
    }
    return env
  }

  /**
   * Compiles every template; a syntax error is reported with the template's origin.
   * `plainRendering: false` renders every template in the engine (for tests that compare).
   */
  static compile(
    sources: ReadonlyArray<TemplateSource>,
    options: { readonly plainRendering?: boolean } = {}
  ): { readonly engine: TemplateEngine } | { readonly errors: ReadonlyArray<{ readonly origin: string; readonly message: string }> } {
    const module = loadMiniJinja()
    const errors: Array<{ origin: string; message: string }> = []
    const env = TemplateEngine.environment(module, sources, (template, error) => {
      errors.push({ origin: template.origin, message: `template syntax error: ${firstLine(error)}` })
    })
    return errors.length > 0 ? { errors } : { engine: new TemplateEngine(module, env, sources, options.plainRendering ?? true) }
  }

  /** The MiniJinja source of the template under `key`, or undefined when there is none. */
  source(key: string): string | undefined {
    return this.sources.find((template) => template.key === key)?.source
  }

  /**
   * A new engine (a module instance of its own) with every template of this one plus `extra`,
   * an extra template replacing one of the same key: templates tried out at run time (prompt
   * optimization) can include the configured ones. Errors are the extra templates' syntax errors.
   */
  extended(
    extra: ReadonlyArray<TemplateSource>
  ): { readonly engine: TemplateEngine } | { readonly errors: ReadonlyArray<{ readonly origin: string; readonly message: string }> } {
    const replaced = new Set(extra.map((template) => template.key))
    return TemplateEngine.compile([...this.sources.filter((template) => !replaced.has(template.key)), ...extra], { plainRendering: this.plainRendering })
  }

  render(key: string, context: unknown): RenderResult {
    const plain = this.plain.get(key)
    if (plain !== undefined) {
      const text = renderPlain(plain, context ?? {})
      if (text !== undefined) return { text }
    }
    try {
      return { text: this.env.renderTemplate(key, context ?? {}) }
    } catch (error) {
      if (isTemplateError(error) && this.stackPointer?.() === this.idleStackPointer) return { error: firstLine(error) }
      this.rebuild()
      return { error: `the template engine failed (${firstLine(error)}); it has been restarted`, engineFailed: true }
    }
  }

  /** Replaces a broken engine: a new module instance with every template compiled again. */
  private rebuild(): void {
    // unregisters the old environment from the glue's finalizer, which would otherwise call into
    // the broken instance when the environment is collected (and throw, outside any request)
    try {
      this.env.free()
    } catch {
      // the broken instance fails to free it: it is dropped whole
    }
    this.module = loadMiniJinja()
    // these sources compiled at start-up, so they compile again
    this.env = TemplateEngine.environment(this.module, this.sources, () => {})
    this.stackPointer = stackPointerOf(this.module)
    this.idleStackPointer = this.stackPointer?.()
  }
}
