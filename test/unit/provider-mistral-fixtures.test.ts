/** The mistral codec on its recorded fixtures (src/providers/mistral/fixtures/). */
import { mistralCodec } from "../../src/providers/mistral/index.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

fixtureSuite("mistral", mistralCodec, { settings: {} })
