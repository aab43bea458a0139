import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { callerOf, openCaller } from "../../src/auth/caller.ts"
import { keyOptionsConflict } from "../../layers/commands/apiKeys.ts"
import { isTaskOf, taskCaller, workspaceNameProblem } from "../../src/workspace.ts"

const member = { publicId: "member000001", workspace: "team-a", admin: false, global: false }
const admin = { ...member, publicId: "admin0000001", admin: true }
const global = { publicId: "global000001", workspace: "default", admin: true, global: true }

const failure = <A, E extends { readonly _tag: string; readonly message: string }>(result: Result.Result<A, E>) => {
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return { tag: result.failure._tag, message: result.failure.message }
}

describe("workspace names", () => {
  it("follow the dataset-name rule, 1 to 64 characters, not only dots", () => {
    for (const name of ["default", "team-a", "Team_B.2", "a".repeat(64), ".hidden"]) expect(workspaceNameProblem(name)).toBeUndefined()
    for (const name of ["", "a".repeat(65), "team a", "équipe", "a/b", ".", "..", "x\u0000"]) {
      expect(workspaceNameProblem(name, "--workspace")).toMatch(/^--workspace: ".*" is not a workspace name \(1 to 64 characters/)
    }
  })
})

describe("the caller of a request", () => {
  it("is a key's own workspace, with its role, with or without a header naming that workspace", () => {
    expect(callerOf(member, undefined)).toEqual(Result.succeed({ publicId: "member000001", workspace: "team-a", role: "member" }))
    expect(callerOf(admin, "team-a")).toEqual(Result.succeed({ publicId: "admin0000001", workspace: "team-a", role: "admin" }))
  })

  it("refuses a header naming another workspace than a non-global key's own (403, naming both)", () => {
    for (const key of [member, admin]) {
      const refused = failure(callerOf(key, "team-b"))
      expect(refused.tag).toBe("Forbidden")
      expect(refused.message).toContain(`belongs to workspace "team-a"`)
      expect(refused.message).toContain(`"team-b"`)
    }
  })

  it("gives a global admin the header's workspace, default without one", () => {
    expect(callerOf(global, "team-b")).toEqual(Result.succeed({ publicId: "global000001", workspace: "team-b", role: "global" }))
    expect(callerOf(global, undefined)).toEqual(Result.succeed({ publicId: "global000001", workspace: "default", role: "global" }))
  })

  it("answers a malformed header with a 400 naming the header, whoever sends it", () => {
    for (const key of [member, global]) {
      const refused = failure(callerOf(key, "team b"))
      expect(refused.tag).toBe("InvalidRequest")
      expect(refused.message).toMatch(/^the gateway-workspace header: "team b" is not a workspace name/)
    }
    expect(failure(openCaller("")).tag).toBe("InvalidRequest")
  })

  it("is a global admin on the header's workspace when authentication is off", () => {
    expect(openCaller(undefined)).toEqual(Result.succeed({ publicId: undefined, workspace: "default", role: "global" }))
    expect(openCaller("team-c")).toEqual(Result.succeed({ publicId: undefined, workspace: "team-c", role: "global" }))
  })

  it("of a background task is the key that launched it, in its workspace (default for a task queued before workspaces)", () => {
    expect(taskCaller({ apiKey: "member000001", workspace: "team-a" })).toEqual({ publicId: "member000001", workspace: "team-a", role: "member" })
    expect(taskCaller({ apiKey: "member000001" })).toEqual({ publicId: "member000001", workspace: "default", role: "member" })
  })

  it("a task is of its payload's workspace (default without one); any other payload is of default", () => {
    expect(isTaskOf("team-a", { workspace: "team-a", functionName: "f" })).toBe(true)
    expect(isTaskOf("team-b", { workspace: "team-a" })).toBe(false)
    expect(isTaskOf("default", { functionName: "f" })).toBe(true)
    expect(isTaskOf("team-a", { functionName: "f" })).toBe(false)
    for (const payload of [null, undefined, "team-a", 7, [], { workspace: 1 }]) expect(isTaskOf("default", payload)).toBe(true)
    expect(isTaskOf("team-a", null)).toBe(false)
  })
})

describe("--create-api-key's workspace flags", () => {
  it("--global needs --admin and excludes --workspace", () => {
    expect(keyOptionsConflict({ admin: true, global: true })).toBeUndefined()
    expect(keyOptionsConflict({ workspace: "team-a", admin: true })).toBeUndefined()
    expect(keyOptionsConflict({ global: true })).toMatch(/^--global goes with --admin/)
    expect(keyOptionsConflict({ admin: true, global: true, workspace: "team-a" })).toMatch(/^--global and --workspace exclude each other/)
  })
})
