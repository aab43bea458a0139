/**
 * A configuration reload builds a new model table from the old one: the clients of providers
 * whose settings did not change are kept (with what they hold: tokens, credentials), the others
 * are made anew.
 */
import { describe, expect, it } from "vitest"
import { ModelTable } from "../../src/inference/models.ts"
import { buildOk } from "./fixtures.ts"

const configWith = (secondModelName: string) =>
  buildOk(`
[models.kept]
routing = ["a"]
[models.kept.providers.a]
type = "dummy"
model_name = "echo_request_messages"

[models.changed]
routing = ["b", "c"]
[models.changed.providers.b]
type = "dummy"
model_name = "${secondModelName}"
[models.changed.providers.c]
type = "dummy"
model_name = "hello"
`)

describe("ModelTable after a reload", () => {
  it("keeps the clients of unchanged providers and makes new ones for changed providers", () => {
    const before = new ModelTable(configWith("echo"))
    const after = new ModelTable(configWith("json"), before)
    expect(after.get("kept")!.providers[0].client).toBe(before.get("kept")!.providers[0].client)
    expect(after.get("changed")!.providers[0].client).not.toBe(before.get("changed")!.providers[0].client)
    expect(after.get("changed")!.providers[0].config.type).toBe("dummy")
    // another provider of a changed model, itself unchanged, is kept too
    expect(after.get("changed")!.providers[1].client).toBe(before.get("changed")!.providers[1].client)
  })

  it("makes every client anew without an earlier table", () => {
    const first = new ModelTable(configWith("echo"))
    const second = new ModelTable(configWith("echo"))
    expect(second.get("kept")!.providers[0].client).not.toBe(first.get("kept")!.providers[0].client)
  })
})
