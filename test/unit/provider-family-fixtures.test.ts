/**
 * The members of the Chat Completions family replayed on their recorded fixtures
 * (`src/providers/<type>/fixtures/`, where a member differs from OpenAI: DeepSeek's answers and
 * streams, the requests of Groq and TGI).
 */
import { deepSeekCodec, groqCodec, tgiCodec } from "../../src/providers/chatCompletionsMembers.ts"
import { fixtureSuite } from "../support/codecFixtureSuite.ts"

const common = { model: "recorded-model", apiKey: "sk-fixture-key" } as const

fixtureSuite(deepSeekCodec.type, deepSeekCodec, { ...common, settings: {} })
fixtureSuite(groqCodec.type, groqCodec, { ...common, settings: {}, kinds: ["requests"] })
fixtureSuite(tgiCodec.type, tgiCodec, { ...common, settings: { api_base: "http://tgi.internal:8080/v1/" }, kinds: ["requests"] })
