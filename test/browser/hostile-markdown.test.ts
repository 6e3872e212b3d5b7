import t from 'tap'
import { chromium, errors, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { build } from '../support/helper.js'
import { hostileInputs } from '../lib/markdown/hostile.js'
import { CHROMIUM, chromiumSkip } from '../support/requirements.js'

const ORIGIN = 'http://meridian.test'

/**
 * Every hostile input, rendered by the route, loaded in headless Chromium: no script may run,
 * on load or when any of its links is clicked. Script is detected three ways, all reported to
 * the test through a binding that survives navigation: a dialog (the corpus calls alert), the
 * dialog functions replaced before any page script, and a report-only Content-Security-Policy
 * that forbids all script, so that any script that runs (inline, handler, javascript: URL)
 * raises a violation event without being blocked.
 */
const skip = chromiumSkip()

const POLICY = "script-src 'none'; object-src 'none'; frame-src 'none'; form-action 'none'; base-uri 'none'"

const WATCH_FOR_SCRIPT = `
  for (const name of ['alert', 'confirm', 'prompt', 'print']) {
    window[name] = (...args) => { window.__scriptRan(name + '(' + args.join() + ')') }
  }
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__scriptRan('policy violation: ' + event.violatedDirective + ' ' + event.blockedURI)
  })
`

const page = (body: string): string => `<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body>${body}</body></html>`

/** A browser context in which every response is ours and every sign of script lands in `events`. */
async function watchedContext (browser: Browser, events: string[], documents: Map<string, string>): Promise<BrowserContext> {
  const context = await browser.newContext({ javaScriptEnabled: true })
  await context.exposeBinding('__scriptRan', (_source, what: string) => { events.push(what) })
  await context.addInitScript(WATCH_FOR_SCRIPT)
  context.on('page', (tab) => {
    tab.on('dialog', (dialog) => {
      events.push(`dialog ${dialog.type()}: ${dialog.message()}`)
      dialog.dismiss().catch(() => {})
    })
  })
  // Nothing leaves the machine: our documents by path, an empty page for anything else.
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url())
    const body = url.origin === ORIGIN ? documents.get(url.pathname) : undefined
    await route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy-report-only': POLICY },
      body: body ?? page('')
    })
  })
  return context
}

/**
 * How long a document may take to fire `load`. Now and then Chromium never fires it (twice in CI, in
 * the tab that had loaded dozens of documents before), and once `page.goto` did not even honour its
 * own timeout (CI, 290 s). So each load also races a deadline of ours, and a load that misses
 * either is tried once more in a fresh browser context, which then goes on loading the documents.
 * Script seen in either attempt stays in the record.
 */
const LOAD_TIMEOUT_MS = 15_000
const LOAD_DEADLINE_MS = LOAD_TIMEOUT_MS + 5000

/** `work`, or a TimeoutError once `ms` have passed without it settling. */
async function withinDeadline<T> (work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new errors.TimeoutError(`${what}: not settled within ${ms} ms`)) }, ms)
  })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** Tabs loading the hostile outputs at once, each in a context of its own. */
const HOSTILE_LOADERS = 3

/** What a user may click: links, and buttons of any kind (a `<summary>` toggles its `<details>`). */
const CLICKABLE = 'a, button, summary, input'

/** Loads the document and lets it run (in `tab`, or a fresh tab), clicking one link or button if asked. */
async function load (context: BrowserContext, path: string, options: { tab?: Page, clickLink?: number } = {}): Promise<number> {
  const tab = options.tab ?? await context.newPage()
  try {
    await tab.goto(ORIGIN + path, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS })
    if (options.clickLink !== undefined) {
      // A click event runs the link's activation behaviour, as a user's click does, and also on
      // links that have no box to click (empty text, a broken image).
      await tab.locator(CLICKABLE).nth(options.clickLink).dispatchEvent('click', undefined, { timeout: LOAD_TIMEOUT_MS })
    }
    await tab.waitForTimeout(80)
    return await tab.locator(CLICKABLE).count()
  } finally {
    if (options.tab === undefined) await tab.close()
  }
}

/**
 * A tab that loads one document after another, in a context whose new tabs click the links. Both
 * are replaced when a load times out.
 */
interface Loader { newContext: () => Promise<BrowserContext>, context: BrowserContext, tab: Page }

/**
 * `attempt`, and on a timeout, once more in a fresh context: a second timeout fails. Each is
 * held to LOAD_DEADLINE_MS. The stuck context is closed without waiting for it.
 */
async function onceMoreOnTimeout<T> (loader: Loader, what: string, attempt: () => Promise<T>): Promise<T> {
  try {
    return await withinDeadline(attempt(), LOAD_DEADLINE_MS, what)
  } catch (error) {
    if (!(error instanceof errors.TimeoutError)) throw error
    return await withinDeadline((async () => {
      const stuck = loader.context
      loader.context = await loader.newContext()
      loader.tab = await loader.context.newPage()
      stuck.close().catch(() => {})
      return await attempt()
    })(), LOAD_DEADLINE_MS, `${what}, once more`)
  }
}

/** Loads the document in the loader's tab. */
async function loadInLoader (loader: Loader, path: string): Promise<number> {
  const attempt = async (): Promise<number> => await load(loader.context, path, { tab: loader.tab })
  return await onceMoreOnTimeout(loader, `loading ${path}`, attempt)
}

/** Clicks one link of the document in a fresh tab. */
async function click (loader: Loader, path: string, clickLink: number): Promise<void> {
  const attempt = async (): Promise<void> => { await load(loader.context, path, { clickLink }) }
  await onceMoreOnTimeout(loader, `clicking link ${clickLink} of ${path}`, attempt)
}

/**
 * Loads the document in the loader's tab, then clicks each of its links, each in a fresh tab: a
 * click's navigation may still be under way when the next load would start.
 */
async function exercise (loader: Loader, path: string): Promise<number> {
  const links = await loadInLoader(loader, path)
  for (let index = 0; index < links; index++) await click(loader, path, index)
  return links
}

t.test('hostile Markdown runs no script in Chromium, on load or on click', { skip, timeout: 300_000 }, async (t) => {
  const app = await build(t)
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']
  })
  t.teardown(async () => { await browser.close() })
  const documents = new Map<string, string>()
  const events: string[] = []
  const newContext = async (): Promise<BrowserContext> => await watchedContext(browser, events, documents)
  const context = await newContext()
  const loader: Loader = { newContext, context, tab: await context.newPage() }

  await t.test('the detector sees script that runs', async (t) => {
    const controls: Array<[string, string]> = [
      ['onerror', '<img src="/missing.png" onerror="alert(1)">'],
      ['inline script', '<script>confirm(2)</script>'],
      ['javascript: link, clicked', '<a href="javascript:alert(3)">x</a>'],
      ['entity-encoded javascript: link, clicked', '<a href="&#106;ava&#x09;script:alert(4)">x</a>'],
      ['a summary clicked: its details toggle', '<details ontoggle="alert(5)"><summary>s</summary>x</details>']
    ]
    for (const [name, html] of controls) {
      const path = `/control/${controls.findIndex(([n]) => n === name)}`
      documents.set(path, page(html))
      events.length = 0
      await exercise(loader, path)
      t.ok(events.length > 0, `${name}: detected (${events.join('; ')})`)
    }
  })

  await t.test('and a safe link navigates without script', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown: '[ok](https://example.com/)' } })
    documents.set('/safe', page(response.json<{ data: string }>().data))
    events.length = 0
    const tab = await context.newPage()
    await tab.goto(ORIGIN + '/safe')
    await Promise.all([tab.waitForURL('https://example.com/'), tab.click('a')])
    await tab.close()
    t.same(events, [])
  })

  for (const [index, { markdown }] of hostileInputs.entries()) {
    const response = await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown } })
    documents.set(`/hostile/${index}`, page(response.json<{ data: string }>().data))
  }
  // Tabs mostly wait (for a load, a click's navigation): a few loaders side by side, each a context with its own
  // record of script, share the outputs.
  let clicked = 0
  await Promise.all(Array.from({ length: HOSTILE_LOADERS }, async (_, first) => {
    const own: string[] = []
    const ownContext = async (): Promise<BrowserContext> => await watchedContext(browser, own, documents)
    const context = await ownContext()
    const loader: Loader = { newContext: ownContext, context, tab: await context.newPage() }
    for (let index = first; index < hostileInputs.length; index += HOSTILE_LOADERS) {
      own.length = 0
      const links = await exercise(loader, `/hostile/${index}`)
      clicked += links
      t.same(own, [], hostileInputs[index]!.name)
    }
    await loader.context.close()
  }))
  t.comment(`${hostileInputs.length} hostile outputs loaded, ${clicked} links and buttons clicked, no script ran`)
})

t.test('math and highlighted code show in Chromium without a script, and no request leaves the page', { skip, timeout: 120_000 }, async (t) => {
  const app = await build(t)
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] })
  t.teardown(async () => { await browser.close() })
  const code = 'const area = (r) => Math.PI * r ** 2 // "<b>" & \u00a0'
  const markdown = [
    'Inline $x^2$, and $\\frac{a}{b}$ displayed:', '', '$$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$$', '',
    '```math', '\\begin{pmatrix}a & b\\\\ c & d\\end{pmatrix}', '```', '',
    '```js', code, '```', '',
    '$\\includegraphics{https://example.com/x.png}$ $\\href{https://example.com/}{link}$ $\\url{https://example.com/}$'
  ].join('\n')
  const html = (await app.inject({ method: 'POST', url: '/api/markdown/parse', payload: { markdown } })).json<{ data: string }>().data
  const requested: string[] = []
  const context = await browser.newContext({ javaScriptEnabled: false })
  await context.route('**/*', async (route) => {
    requested.push(route.request().url())
    await route.fulfill({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page(html) })
  })
  const tab = await context.newPage()
  await tab.goto(`${ORIGIN}/math`, { waitUntil: 'load' })
  await tab.waitForTimeout(200)
  // A string, not a function: tsx would add helpers to a function that the page does not have.
  const seen = await tab.evaluate(`(() => {
    const box = (selector) => {
      const rect = document.querySelector(selector)?.getBoundingClientRect()
      return { width: rect?.width ?? 0, height: rect?.height ?? 0 }
    }
    return {
      formulas: document.querySelectorAll('math').length,
      displayed: [...document.querySelectorAll('math')].map((math) => getComputedStyle(math).display),
      superscript: box('msup'),
      fraction: box('mfrac'),
      matrix: box('mtable'),
      code: document.querySelector('pre code')?.textContent,
      tokens: document.querySelectorAll('pre code span[class^="hljs-"]').length,
      links: document.querySelectorAll('a').length,
      images: document.querySelectorAll('img').length
    }
  })()`) as {
    formulas: number,
    displayed: string[],
    superscript: { width: number },
    fraction: { height: number },
    matrix: { height: number },
    code: string,
    tokens: number,
    links: number,
    images: number
  }
  t.equal(seen.formulas, 7, 'every formula is a math element, those of commands refused (shown as their names) too')
  t.same(seen.displayed.filter((display) => display === 'block math').length, 2, 'the displayed ones as blocks: MathML Core in Chromium')
  t.ok(seen.superscript.width > 0 && seen.fraction.height > 0 && seen.matrix.height > seen.fraction.height, `laid out as math: ${JSON.stringify(seen)}`)
  t.equal(seen.code, code + '\n', 'the code block\'s text is its source exactly')
  t.ok(seen.tokens >= 4, `in highlighted tokens (${seen.tokens})`)
  t.same([seen.links, seen.images], [0, 0], 'TeX made no link and no image')
  t.same(requested, [`${ORIGIN}/math`], 'the page asked for nothing but itself')
})
