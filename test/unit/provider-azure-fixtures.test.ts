/** The azure codec on its recorded fixtures (src/providers/azure/fixtures/). */
import { azureCodec } from "../../src/providers/azure/index.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

fixtureSuite("azure", azureCodec, { settings: { endpoint: "https://my-resource.openai.azure.com", deployment_id: "gpt-4o-prod" } })
