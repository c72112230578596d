/**
 * Loaded into the measured service process (`node --expose-gc --import
 * ./bench/scale/HeapProbe.ts src/main.ts`): on SIGUSR2 it collects garbage
 * (twice: what the first frees may unpin more) and prints one line,
 * `SCALE_MEMORY {"rss":..,"heapUsed":..,...}`, on stderr. The service itself
 * does nothing with SIGUSR2. Only the benchmark loads this.
 */
process.on("SIGUSR2", () => {
  globalThis.gc?.()
  globalThis.gc?.()
  process.stderr.write(`SCALE_MEMORY ${JSON.stringify(process.memoryUsage())}\n`)
})
