// Prints the last line of a test run, "N passed, M failed", from vitest's JSON report
// (the type check and the layer check count as one test each). Exits non-zero when anything
// failed or nothing ran.
import * as fs from "node:fs"

const [reportPath, ...checksFailed] = process.argv.slice(2)
let passed = 0
let failed = 0
try {
  const report = JSON.parse(fs.readFileSync(reportPath, "utf8"))
  passed = report.numPassedTests
  failed = report.numFailedTests + (report.numRuntimeErrors ?? 0)
  // a file that failed outside its tests (an import, a beforeAll) counts once, its tests skipped
  for (const suite of report.testResults ?? []) {
    if (suite.status === "failed" && !(suite.assertionResults ?? []).some((test: { status: string }) => test.status === "failed")) failed++
  }
} catch {
  failed++
}
for (const checkFailed of checksFailed) {
  if (checkFailed === "1") failed++
  else passed++
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
