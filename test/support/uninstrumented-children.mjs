// Preloaded into every test process (`node-arg` in package.json's tap configuration).
//
// tap instruments each Node process that a test spawns: its processinfo module puts its module
// loader in NODE_OPTIONS and adds it again to each child's through process-on-spawn, for coverage
// and `tap --changed`, neither of which this project uses (coverage is off). On Node 20 that loader
// costs each spawned CLI or service about 0.8 s of CPU at start, and the CLI's tests spawn it
// dozens of times. The processes the tests start run as production runs them: without it.
import processOnSpawn from 'process-on-spawn'

const processInfoLoader = /\s*(?:"--import=[^"]*@tapjs\/processinfo[^"]*"|--import=\S*@tapjs\/processinfo\S*)/g

processOnSpawn.removeAllListeners()
if (process.env.NODE_OPTIONS !== undefined) {
  process.env.NODE_OPTIONS = process.env.NODE_OPTIONS.replace(processInfoLoader, '').trim()
}
