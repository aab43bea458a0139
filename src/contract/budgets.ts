/** The endpoints of BudgetsGroup (the HttpApi contract), over the request and answer Schemas of src/api/budgets.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, bodyStatuses, gatewayErrors } from "../api/errors.ts"
import { BudgetJson, BudgetList, SetBudgetRequest } from "../api/budgets.ts"
import { AdminOnly, AdminPurpose, Audited, requiresKey } from "./guard.ts"

export const BudgetsGroup = HttpApiGroup.make("budgets")
  .add(
    HttpApiEndpoint.get("listBudgets", "/v1/budgets", { success: BudgetList, error: gatewayErrors([...adminStatuses]) })
      .annotateMerge(OpenApi.annotations({ summary: "List the workspace's budgets: those set at run time, and the configuration's that can hold in it (read-only)" })),
    HttpApiEndpoint.put("setBudget", "/v1/budgets", {
      payload: SetBudgetRequest,
      success: BudgetJson,
      error: gatewayErrors([...bodyStatuses, 404, ...adminStatuses])
    }).annotate(Audited, "budget.set")
      .annotateMerge(OpenApi.annotations({
        summary: "Set the workspace's budget of a scope and period (a second PUT changes its limit); 404 for an API key of no key of the workspace"
      })),
    HttpApiEndpoint.delete("deleteBudget", "/v1/budgets/:id", {
      params: { id: Schema.String },
      success: BudgetJson,
      error: gatewayErrors([400, 404, ...adminStatuses])
    }).annotate(Audited, "budget.delete")
      .annotateMerge(OpenApi.annotations({ summary: "Delete a budget set at run time; 404 when the workspace has none with that id" }))
  )
  .annotate(AdminOnly, true)
  .annotate(AdminPurpose, "managing budgets")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Budgets" }))
