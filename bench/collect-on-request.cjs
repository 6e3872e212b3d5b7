'use strict'
// Preloaded by `npm run bench`'s memory part into `meridian serve`, started with --expose-gc: on the
// parent's 'collect' message, a full collection, then the process's memory in bytes. The bench
// measures what the service keeps, not how far V8 lets garbage pile up before it collects.
// The channel must not keep the process alive: a server that fails to start still exits.
process.channel?.unref()
process.on('message', (message) => {
  if (message !== 'collect') return
  global.gc()
  const { rss, heapUsed } = process.memoryUsage()
  process.send({ rss, heapUsed })
})
