/**
 * The route matrix of workspaces (issue 39): every endpoint of the contract is either proven to
 * keep workspaces apart by a named HTTP test (run on Postgres and ClickHouse with two
 * workspaces' keys), or marked shared with the reason. A new endpoint fails here until it is
 * classified, and a named test that is renamed or removed fails here too.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { GatewayApi } from "../../src/contract/gateway.ts"

type Coverage =
  /** proven by the test of this title in test/integration/<file> (or a path from there) */
  | { readonly isolatedBy: readonly [file: string, title: string] }
  /** nothing of a workspace is read or written, or what is is documented as shared */
  | { readonly shared: string }

const inferences = "workspaces-inferences.test.ts"
const datasets = "workspaces-datasets.test.ts"
const tasks = "workspaces-tasks.test.ts"
const keys = "workspaces-keys.test.ts"
const audit = "audit-log.test.ts"

const readsInferences = { isolatedBy: [inferences, "get_inferences and list_inferences of team-b never show A's inference"] } as const
const surfaces = { isolatedBy: [inferences, "inferences made through the OpenAI and Anthropic surfaces are stored in the caller's workspace"] } as const
const storedResponses = { isolatedBy: [inferences, "stored responses are seen in their workspace only, even through the same key naming another"] } as const
const datapoints = {
  isolatedBy: [datasets, "answers A's datapoint through B as an unknown id on get, update, metadata, delete and history; A's stays as it was"]
} as const
const listedDatasets = {
  isolatedBy: [datasets, "lists each workspace's datasets, and each `train` holds its own datapoints (listed and searched)"]
} as const
const transfers = { isolatedBy: [datasets, "exports, imports and builds from inferences in the caller's `train` only"] } as const
const evaluationRuns = {
  isolatedBy: [datasets, "runs an evaluation over B's `train` on B's datapoints only; runs are invisible across workspaces; A's dataset is no dataset of B"]
} as const
const workflowRuns = {
  isolatedBy: [datasets, "keeps workflow runs and episodes in their workspace; B's inference naming A's run episode is not pinned"]
} as const
const batches = { isolatedBy: [tasks, "another workspace's batch is an unknown batch, on its status and on its inferences' route"] } as const
const dicl = { isolatedBy: [tasks, "DICL: each workspace has its own examples of a shared variant; a replace in B leaves A's; A's task is unknown to B"] } as const
const gepa = { isolatedBy: [tasks, "GEPA: another workspace's task is unknown to get, cancel and export (HTTP and command line), and is not cancelled"] } as const
const sessions = { isolatedBy: [keys, "sign a workspace admin in with its workspace and role, and a global admin as global"] } as const
const adminKeys = { isolatedBy: [keys, "answer another workspace's key exactly as a key that does not exist, and leave it working"] } as const
const budgets = { isolatedBy: ["budgets-runtime.test.ts", "another workspace's budget is invisible and cannot be deleted (the 404 of an unknown id)"] } as const
const configuration = "the configuration (functions, models, variants) is shared by every workspace"

const matrix: Readonly<Record<string, Coverage>> = {
  "POST /inference": readsInferences,
  "POST /openai/v1/chat/completions": surfaces,
  "POST /openai/v1/embeddings": {
    isolatedBy: ["../unit/cache-sharing.test.ts", "shares within the workspace: none in default (the entries made before workspaces), its name elsewhere"]
  },
  "GET /openai/v1/models": { shared: configuration },
  "POST /openai/v1/responses": storedResponses,
  "GET /openai/v1/responses/:id": storedResponses,
  "DELETE /openai/v1/responses/:id": storedResponses,
  "GET /openai/v1/responses/:id/input_items": storedResponses,
  "POST /anthropic/v1/messages": surfaces,
  "POST /anthropic/v1/messages/count_tokens": { shared: "counts a request's tokens against the shared configuration; stores nothing" },
  "GET /anthropic/v1/models": { shared: configuration },
  "GET /anthropic/v1/models/:model_id": { shared: configuration },
  "POST /batch_inference": batches,
  "GET /batch_inference/:batch_id": batches,
  "GET /batch_inference/:batch_id/inference/:inference_id": batches,
  "POST /feedback": { isolatedBy: [inferences, "feedback from team-b on A's inference or episode answers as on an unknown id; A's feedback is stored"] },
  "POST /v1/inferences/get_inferences": readsInferences,
  "POST /v1/inferences/list_inferences": readsInferences,
  "GET /v1/datasets": listedDatasets,
  "POST /v1/datasets/:dataset_name/datapoints": listedDatasets,
  "POST /v1/datasets/:dataset_name/get_datapoints": datapoints,
  "POST /v1/datasets/:dataset_name/list_datapoints": listedDatasets,
  "POST /v1/datasets/:dataset_name/from_inferences": transfers,
  "PATCH /v1/datasets/:dataset_name/datapoints": datapoints,
  "PATCH /v1/datasets/:dataset_name/datapoints/metadata": datapoints,
  "DELETE /v1/datasets/:dataset_name/datapoints": datapoints,
  "DELETE /v1/datasets/:dataset_name": {
    isolatedBy: [datasets, "deletes B's `train` only when B deletes its dataset; deleting a dataset only A has deletes nothing"]
  },
  "GET /v1/datasets/:dataset_name/datapoints/export": transfers,
  "POST /v1/datasets/:dataset_name/datapoints/import": transfers,
  "POST /v1/evaluations/run": evaluationRuns,
  "GET /v1/evaluations/runs": evaluationRuns,
  "GET /v1/evaluations/runs/:run_id": evaluationRuns,
  "POST /workflow_evaluation_run": workflowRuns,
  "POST /workflow_evaluation_run/:run_id/episode": workflowRuns,
  "GET /workflow_evaluation_run/:run_id": workflowRuns,
  "GET /workflow_evaluation_runs": workflowRuns,
  "POST /dynamic_evaluation_run": workflowRuns,
  "POST /dynamic_evaluation_run/:run_id/episode": workflowRuns,
  "GET /dynamic_evaluation_run/:run_id": workflowRuns,
  "GET /dynamic_evaluation_runs": workflowRuns,
  "GET /v1/experimentation/:function_name": {
    shared: "adaptive experimentation's statistics are per function, shared by every workspace (docs/experimentation.md)"
  },
  "POST /v1/optimization/dicl": dicl,
  "GET /v1/optimization/dicl/:task_id": dicl,
  "POST /v1/optimization/gepa": gepa,
  "GET /v1/optimization/gepa/:task_id": gepa,
  "DELETE /v1/optimization/gepa/:task_id": gepa,
  "GET /v1/ui/session": sessions,
  "POST /v1/ui/session": sessions,
  "GET /v1/ui/oidc/start": { shared: "starts a sign-in; the workspace comes with the identity, below" },
  "GET /v1/ui/oidc/callback": {
    isolatedBy: ["../ui/oidc.test.ts", "signs an admin in: it acts in its rule's workspace, as itself in the audit log; signing out ends the session everywhere"]
  },
  "DELETE /v1/ui/session": { shared: "ends the caller's own session; reads and writes no workspace's data" },
  "GET /v1/ui/config": { shared: configuration },
  "GET /status": { shared: "the process's liveness" },
  "GET /health": { shared: "the process's and its databases' health" },
  "GET /metrics": { shared: "the process's counters, labelled by function and model, never by workspace data" },
  "GET /openapi.json": { shared: "the contract" },
  "GET /docs": { shared: "the contract" },
  "GET /v1/ui/inferences/:inference_id": { isolatedBy: [inferences, "the UI's inference and episode routes answer team-b's admin as for an unknown id"] },
  "GET /v1/ui/episodes/:episode_id": { isolatedBy: [inferences, "the UI's inference and episode routes answer team-b's admin as for an unknown id"] },
  "GET /v1/ui/optimization/gepa/:task_id/export": gepa,
  "GET /v1/ui/overview": { isolatedBy: [tasks, "the Overview of B does not count A's inferences"] },
  "GET /v1/ui/datasets/:dataset_name/datapoints/:datapoint_id/history": datapoints,
  "GET /v1/ui/api_keys": { isolatedBy: [keys, "show a workspace admin only its workspace's keys, with their workspace and role"] },
  "POST /v1/ui/api_keys": { isolatedBy: [keys, "make a workspace admin's new key in its workspace, and refuse it a global admin"] },
  "POST /v1/ui/api_keys/:public_id/disable": adminKeys,
  "GET /v1/ui/workspaces": { isolatedBy: [keys, "list the workspaces for a global admin only"] },
  "GET /v1/audit": {
    isolatedBy: [audit, "shows a workspace admin its workspace's entries only, and a global admin every workspace's or the one it names"]
  },
  "GET /v1/budgets": budgets,
  "PUT /v1/budgets": { isolatedBy: ["budgets-runtime.test.ts", "an API key of another workspace is a 404, as an unknown key"] },
  "DELETE /v1/budgets/:id": budgets,
  "GET /v1/spend": {
    isolatedBy: ["spend-http.test.ts", "another workspace's key and tag read 0; a global admin reads the workspace its header names"]
  },
  "POST /internal/config/reload": { shared: configuration }
}

const endpoints = Object.values(GatewayApi.groups).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => `${endpoint.method} ${endpoint.path}`)
)

describe("the workspace route matrix", () => {
  it("classifies every endpoint of the contract, and only those", () => {
    expect(endpoints.filter((endpoint) => matrix[endpoint] === undefined), "endpoints with no workspace case nor a shared mark").toEqual([])
    expect(Object.keys(matrix).filter((endpoint) => !endpoints.includes(endpoint)), "entries of no endpoint").toEqual([])
  })

  it("names tests that exist", () => {
    const texts = new Map<string, string>()
    const missing = Object.entries(matrix).flatMap(([endpoint, coverage]) => {
      if (!("isolatedBy" in coverage)) return []
      const [file, title] = coverage.isolatedBy
      const path = new URL(`../integration/${file}`, import.meta.url)
      const text = texts.get(file) ?? readFileSync(path, "utf8")
      texts.set(file, text)
      return text.includes(`it(${JSON.stringify(title)}`) ? [] : [`${endpoint}: ${file} has no test "${title}"`]
    })
    expect(missing).toEqual([])
  })
})
