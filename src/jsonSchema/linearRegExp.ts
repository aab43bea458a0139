/**
 * `pattern` and `patternProperties` of request schemas run on RE2 (the pure JavaScript port
 * re2js), whose matching time is linear in the input: no pattern can backtrack
 * catastrophically. Ajv takes the engine through its `code.regExp` option: a function
 * `(pattern, flags) => { test(s) }` with a `code` property (the expression standalone code
 * would call; the gateway never generates standalone code).
 */
import { RE2JS } from "re2js"
import { chargeTimed } from "./workMeter.ts"

/** A pattern RE2 cannot run, or patterns too large to compile: the schema is refused. */
export class RefusedPattern extends Error {}

// re2js keeps a lazily built DFA per pattern that may grow to 8 MB; cached validators must not
// keep that much, so a DFA grown past this is dropped once the validation that grew it is over
const keptDfaBytes = 64 * 1024

interface Re2Internals {
  readonly re2Input: { lazyDFA: { stateBudget: number; memBudget: number } | null }
}

const grown = new Set<LinearPattern>()

class LinearPattern {
  readonly #re: RE2JS
  readonly #cost: number
  readonly source: string
  constructor(source: string, re: RE2JS) {
    this.source = source
    this.#re = re
    this.#cost = re.programSize()
  }
  test(text: string): boolean {
    grown.add(this)
    // RE2's worst case is linear in the text times the size of the pattern's program; on its
    // fast path (a DFA whose states are built) a character costs a few nanoseconds
    return chargeTimed(text.length * this.#cost, () => this.#re.test(text))
  }
  /** Drops the DFA the last validation built when it is large (it is rebuilt when needed). */
  shrink(): void {
    const internals = (this.#re as unknown as Re2Internals).re2Input
    const dfa = internals.lazyDFA
    if (dfa !== null && dfa.stateBudget - dfa.memBudget > keptDfaBytes) internals.lazyDFA = null
  }
  toString(): string {
    return `/${this.source}/`
  }
}

/** Releases what the patterns used by the last validation grew beyond their allowance. */
export const shrinkPatterns = (): void => {
  for (const pattern of grown) pattern.shrink()
  grown.clear()
}

const unsupported = "not supported (patterns in request schemas run on a linear-time engine: no backreferences or lookaround)"

export interface PatternLimits {
  /** characters of all the distinct patterns of one schema (parsing costs up to ~12 us a character) */
  readonly maxLength: number
  /** RE2 instructions of one pattern (matching costs up to ~20 ns a character an instruction) */
  readonly maxProgramSize: number
  /** RE2 instructions of all the distinct patterns of one schema (compiling costs up to ~6 us an instruction) */
  readonly maxTotalProgramSize: number
}

interface Group {
  /** instructions of the alternatives closed so far */
  closed: number
  /** instructions of the alternative being read */
  open: number
  /** instructions of its last atom (what a quantifier repeats) */
  last: number
}

/**
 * An estimate of the RE2 instructions a pattern compiles to, read without compiling it: RE2
 * learns how far counted repetitions (`x{1000}`) expand only by compiling, which takes time
 * in proportion. Roughly RE2's own size estimate: each atom one, a group the sum of its
 * alternatives, `x{n,m}` m times x plus m - n, `x{n,}` n times x plus one.
 */
export const estimatedProgramSize = (pattern: string): number => {
  const stack: Array<Group> = [{ closed: 0, open: 0, last: 0 }]
  let top = stack[0]
  const atom = (size: number) => {
    top.open += size
    top.last = size
  }
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]
    if (c === "\\") {
      // \p{Greek}, \x{263a}, \u{1F600} hold braces; any other escape is one character (or four hex digits)
      if ("pPxu".includes(pattern[i + 1]) && pattern[i + 2] === "{") {
        const close = pattern.indexOf("}", i + 3)
        i = close < 0 ? pattern.length : close + 1
      } else i += 2
      atom(1)
    } else if (c === "[") {
      let j = i + 1
      if (pattern[j] === "^") j++
      if (pattern[j] === "]") j++
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1
      i = j + 1
      atom(1)
    } else if (c === "(") {
      top = { closed: 0, open: 0, last: 0 }
      stack.push(top)
      i++
    } else if (c === ")" && stack.length > 1) {
      const group = stack.pop()!
      top = stack[stack.length - 1]
      atom(group.closed + group.open + 2)
      i++
    } else if (c === "|") {
      top.closed += top.open + 1
      top.open = 0
      top.last = 0
      i++
    } else if (c === "{" && /^\{\d+(,\d*)?\}/.test(pattern.slice(i, i + 24))) {
      const [quantifier, low, high] = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i, i + 24))!
      // RE2 refuses counts over 1000
      const min = Math.min(Number(low), 1001)
      const max = high === undefined ? min : high === "" ? -1 : Math.min(Number(high), 1001)
      const repeated = max === -1 ? 1 + min * top.last : max * top.last + (max - min)
      top.open += repeated - top.last
      top.last = repeated
      i += quantifier.length
    } else if (c === "*" || c === "+" || c === "?") {
      top.open += 2
      top.last += 2
      i++
    } else {
      atom(1)
      i++
    }
  }
  let size = 0
  for (const group of stack) size += group.closed + group.open
  return size
}

/**
 * A `code.regExp` engine for the ajv instance of one request schema: it compiles each distinct
 * pattern once and refuses patterns past `limits`, before compiling them where it can.
 */
export const linearRegExpEngine = (limits: PatternLimits) => {
  const compiled = new Map<string, LinearPattern>()
  let length = 0
  let programSize = 0
  const tooLarge = (pattern: string, size: number) =>
    new RefusedPattern(
      `pattern ${JSON.stringify(pattern)}: too large (it compiles to about ${size} RE2 instructions, at most ${limits.maxProgramSize})`
    )
  return Object.assign((pattern: string, _flags: string): LinearPattern => {
    const known = compiled.get(pattern)
    if (known !== undefined) return known
    length += pattern.length
    if (length > limits.maxLength) {
      throw new RefusedPattern(`the schema's patterns are longer than ${limits.maxLength} characters in all`)
    }
    const estimate = estimatedProgramSize(pattern)
    if (estimate > limits.maxProgramSize) throw tooLarge(pattern, estimate)
    programSize += estimate
    if (programSize > limits.maxTotalProgramSize) {
      throw new RefusedPattern(`the schema's patterns compile to more than ${limits.maxTotalProgramSize} RE2 instructions in all`)
    }
    let re: RE2JS
    try {
      // ECMAScript escapes RE2 spells otherwise (\uXXXX, \u{...}, \cX) are translated first
      re = RE2JS.compile(RE2JS.translateRegExp(pattern))
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      throw new RefusedPattern(`pattern ${JSON.stringify(pattern)}: ${unsupported}: ${reason}`)
    }
    if (re.programSize() > limits.maxProgramSize) throw tooLarge(pattern, re.programSize())
    const linear = new LinearPattern(pattern, re)
    compiled.set(pattern, linear)
    return linear
  }, { code: "linearRegExp" })
}
