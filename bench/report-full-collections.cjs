'use strict'
// Preloaded by `npm run bench`'s memory part into `meridian serve`. It watches the full
// collections (mark-compact) that V8 makes of its own accord, reads the process's memory right
// after each, and on the parent's 'report' message sends the latest reading with their count.
// The heap it reads is the old generation's (every space but the young ones): what survived the
// collection, which the requests served since (in the young generation) leave alone. The reading
// comes a tick or two after the collection, as perf_hooks delivers its entries: close enough.
// It starts no collection: what it reports is what the service keeps as V8 runs it in production.
// The channel must not keep the process alive: a server that fails to start still exits.
const { PerformanceObserver, constants } = require('node:perf_hooks')
const { getHeapSpaceStatistics } = require('node:v8')

const oldGenerationUsed = () => getHeapSpaceStatistics()
  .filter(({ space_name: name }) => !name.startsWith('new_'))
  .reduce((sum, { space_used_size: used }) => sum + used, 0)

let fullCollections = 0
let afterLatest = null
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue
    fullCollections++
    const { rss, external, arrayBuffers } = process.memoryUsage()
    afterLatest = { heapKept: oldGenerationUsed(), rss, external, arrayBuffers }
  }
}).observe({ entryTypes: ['gc'] })

process.channel?.unref()
process.on('message', (message) => {
  if (message === 'report') process.send({ fullCollections, afterLatest })
})
