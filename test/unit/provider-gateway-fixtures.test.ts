/** The gateway codec (another gateway's /inference) on its recorded fixtures (src/providers/gateway/fixtures/). */
import { gatewayCodec } from "../../src/providers/gateway/index.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

fixtureSuite("gateway", gatewayCodec, {
  settings: { gateway_url: "http://central.example:3000" },
  model: "mini",
  apiKey: "sk-gw-central-key",
  streamUrl: "http://central.example:3000/inference"
})
