/** The smallest chat `ModelRequest`: one user message "Hi", no parameters, tools or JSON mode. */
import type { ModelRequest } from "../../src/inference/types.ts"

export const hiRequest: ModelRequest = {
  messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
}
