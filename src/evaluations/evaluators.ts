// placeholder: replaced by the scoring module (helper wt-2)
import type { Input } from "../api/inference.ts"
import type { EvaluatorConfig } from "../config/types.ts"
import type { StoredDatapoint } from "../datasets/store.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import type { ModelRequest } from "../inference/types.ts"
export type Score = boolean | number | null
export interface Evaluated {
  readonly functionType: "chat" | "json"
  readonly datapoint: StoredDatapoint
  readonly output: ReadonlyArray<ChatOutputBlock> | JsonOutput
  readonly modelRequest: ModelRequest
}
export type DeterministicEvaluator = Exclude<EvaluatorConfig, { readonly type: "llm_judge" }>
export type JudgeEvaluator = Extract<EvaluatorConfig, { readonly type: "llm_judge" }>
export declare const scoreOutput: (evaluator: DeterministicEvaluator, evaluated: Evaluated) => Score
export declare const judgeInput: (evaluator: JudgeEvaluator, evaluated: Evaluated) => Input | undefined
export declare const judgeScore: (evaluator: JudgeEvaluator, answer: JsonOutput) => Score | { readonly problem: string }
