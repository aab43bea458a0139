/** `GET /v1/experimentation/{function_name}`: how the function's variants are drawn now (src/experimentation/view.ts). */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { Experimentation } from "../../src/experimentation/service.ts"
import { jsonResponse } from "./respond.ts"

export const experimentationHandler = Effect.gen(function*() {
  const functionName = (yield* HttpRouter.params).function_name ?? ""
  const view = yield* (yield* Experimentation).describe(functionName)
  return jsonResponse(JSON.stringify(view))
})
