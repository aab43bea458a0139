import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { folderOf, resolvePath } from "../../src/config/paths.ts"

describe("config paths (no node:path in the core)", () => {
  it("resolves a relative path against a folder as path.resolve does", () => {
    const cases: Array<[string, string]> = [
      ["/cfg", "tools/weather.json"],
      ["/cfg", "./tools/../schemas//user.json"],
      ["/cfg/functions", "../../../etc/templates"],
      ["/cfg", "."],
      ["/", "a/b"],
      ["/cfg/", "x.json"]
    ]
    for (const [folder, relative] of cases) expect(resolvePath(folder, relative)).toBe(path.resolve(folder, relative))
  })

  it("keeps an absolute path, normalised", () => {
    expect(resolvePath("/cfg", "/shared/./partials/../rules.minijinja")).toBe("/shared/rules.minijinja")
  })

  it("leaves a path relative when there is no folder to resolve it against (the shell resolves it)", () => {
    expect(resolvePath(undefined, "./templates/../x.minijinja")).toBe("x.minijinja")
    expect(resolvePath(undefined, "../x")).toBe("../x")
    expect(resolvePath("config", "../shared/x")).toBe("shared/x")
  })

  it("gives the folder of a file", () => {
    expect(folderOf("/cfg/gateway.toml")).toBe("/cfg")
    expect(folderOf("/gateway.toml")).toBe("/")
    expect(folderOf("gateway.toml")).toBe(".")
    expect(folderOf("config/gateway.toml")).toBe("config")
  })
})
