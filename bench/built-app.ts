/**
 * The service as `npm run build` left it in dist/. Benchmarks run under tsx, which cannot load
 * TypeScript in a worker thread, and the Markdown route renders in worker threads; the built
 * app is also what the image runs. The bench:* scripts build first.
 */
export async function importBuiltApp (): Promise<{ buildApp: typeof import('../app.js').buildApp, loadConfig: typeof import('../config.js').loadConfig }> {
  const [app, config] = await Promise.all([
    import(new URL('../dist/app.js', import.meta.url).href) as Promise<typeof import('../app.js')>,
    import(new URL('../dist/config.js', import.meta.url).href) as Promise<typeof import('../config.js')>
  ])
  return { buildApp: app.buildApp, loadConfig: config.loadConfig }
}
