/**
 * Once per test run: one ClickHouse server of our own (unless GATEWAY_TEST_CLICKHOUSE_URL
 * names one already), the machine's PostgreSQL and Redis, started when needed, and Chromium for
 * the UI's tests, installed when missing. Tests find them in
 * GATEWAY_TEST_CLICKHOUSE_URL and GATEWAY_TEST_POSTGRES_URL, and take databases of their own
 * with `freshDatabase` (test/support/databases.ts). The ClickHouse server and its data are
 * gone when the run ends.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildUi, uiIsCurrent } from "../../scripts/bundle.ts"
import { ensureChromium } from "../../scripts/chromium.ts"
import { type ClickHouseServer, startClickHouse } from "../../scripts/clickhouse.ts"
import { ensurePostgres } from "../../scripts/postgres.ts"
import { ensureRedis } from "../../scripts/redis.ts"

export default async function setup() {
  // the folders tests write configurations into, all removed at the end of the run
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-tests-"))
  process.env.GATEWAY_TEST_SCRATCH = scratch
  let clickHouse: ClickHouseServer | undefined
  if (!process.env.GATEWAY_TEST_CLICKHOUSE_URL) {
    clickHouse = await startClickHouse()
    process.env.GATEWAY_TEST_CLICKHOUSE_URL = clickHouse.url
  }
  if (!process.env.GATEWAY_TEST_POSTGRES_URL) {
    process.env.GATEWAY_TEST_POSTGRES_URL = await ensurePostgres()
  }
  if (!process.env.GATEWAY_TEST_REDIS_URL) {
    process.env.GATEWAY_TEST_REDIS_URL = await ensureRedis()
  }
  // the web UI's tests: the browser, and the UI as `npm install` builds it (built again here when ui/ changed since)
  ensureChromium()
  if (!uiIsCurrent() && !(await buildUi())) throw new Error("the web UI could not be built")
  return async () => {
    await clickHouse?.stop()
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}
