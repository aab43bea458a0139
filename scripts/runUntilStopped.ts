/** For the test servers run as commands (`node scripts/clickhouse.ts`, ...): keeps the process alive until Ctrl-C or SIGTERM, then stops the server. */
export const runUntilStopped = (stop: () => Promise<void>): void => {
  const keepAlive = setInterval(() => {}, 1 << 30)
  const shutdown = () => {
    clearInterval(keepAlive)
    void stop()
  }
  process.once("SIGINT", shutdown)
  process.once("SIGTERM", shutdown)
}
