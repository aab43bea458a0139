/** The Responses API codec on its recorded fixtures (src/providers/openai/responses/fixtures/). */
import { responsesCodec } from "../../src/providers/openai/responses/index.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

fixtureSuite("openai/responses", responsesCodec, { settings: {} })
