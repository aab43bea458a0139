// placeholder: replaced by the statistics module (helper wt-2)
import type { EvaluatorSummary } from "./store.ts"
export declare class ScoreAccumulator {
  add(score: boolean | number): void
  addError(): void
  summary(): EvaluatorSummary
}
export declare const confidenceHalfWidth: (summary: EvaluatorSummary) => number | undefined
export declare const cutoffMet: (summary: EvaluatorSummary, optimize: "max" | "min", cutoff: number) => boolean
export declare const parseEvaluatorNumbers: (text: string, field: string) => Record<string, number> | { readonly problem: string }
export declare const minScoresForStopping: number
export declare const precisionReached: (summaries: Readonly<Record<string, EvaluatorSummary>>, precision: Readonly<Record<string, number>>) => boolean
