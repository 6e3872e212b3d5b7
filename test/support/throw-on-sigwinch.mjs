// Preloaded (node --import) into `meridian serve` by test/cli/serve.test.ts: SIGWINCH (a signal
// close-with-grace leaves alone) makes the process throw an error nothing catches, as a bug in a
// callback would.
process.on('SIGWINCH', () => {
  setImmediate(() => { throw new Error('a deliberate uncaught error') })
})
