/**
 * The servers of the benchmark, each started by bench/harness.ts's startServer in a child process
 * of its own, which sends `{ port }` once listening:
 *
 *   app <database URL> <users>   the built app in-process (dist/: render threads cannot load
 *                                TypeScript) with the login throttle opened up, a `bench` user and
 *                                <users> seeded ones: for the login part's many failed logins. The
 *                                rate comparisons run `meridian serve` itself (bench/service.ts)
 *   fixed                        Fastify (no logger) answering fixed bodies of the routes' shapes
 *   fixed-logged                 the same with Fastify's default logger at info, on standard output
 *   bare-sun                     node:http calling astronomy-engine's searches for each event
 *   bare-markdown                node:http calling markdown-it with the service's options
 *   bare-markdown-highlight-math the same with highlight.js on fences and KaTeX's MathML for $…$, $$…$$ and math fences
 *   bare-markdown-html           the same with raw HTML on, its output through the service's sanitizer:
 *                                parse5, hast-util-sanitize with the same schema, hast-util-to-html
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)

export const BENCH_USER = { username: 'bench', password: 'bench-password' }
export const JWT_SECRET = 'bench-secret-that-is-at-least-32-characters-long'
/** Room for 1 MiB of Markdown in a JSON body. */
export const BODY_LIMIT = String(4 * 1024 * 1024)

/** Answers the sun route gives, in shape and size. */
export const FIXED_SUN = {
  meta: { timestamp: 1700000000, latitude: 48.8566, longitude: 2.3522 },
  data: {
    sunrise: 1699987283,
    sunset: 1700021215,
    transit: 1700004249,
    civil_twilight_begin: 1699985224,
    civil_twilight_end: 1700023274,
    nautical_twilight_begin: 1699982904,
    nautical_twilight_end: 1700025594,
    astronomical_twilight_begin: 1699980641,
    astronomical_twilight_end: 1700027857
  }
}
const USER = { id: '1', name: 'Ada Lovelace', birthdate: '1815-12-10', gender: 'female', short_desc: 'Engineer who likes chess.', age: 210, online: true }
const FIXED_LIST = {
  meta: { count_total: 1001, count_loaded: 20, current_page: 1, total_pages: 51 },
  data: Array.from({ length: 20 }, (_, i) => ({ ...USER, id: String(i + 1) })),
  links: ['/api/user/list', ...[2, 3, 4, 5, 6, 51].map((page) => `/api/user/list?page=${page}`)]
}
const FIXED_GRANT = {
  access_token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6ImFiY2RlZmdoaWprbG1ub3AifQ.eyJzdWIiOiIxIiwidG9rZW5fdXNlIjoiYWNjZXNzIiwidmVyIjowfQ.c2lnbmF0dXJlLW9mLXRoZS1yaWdodC1sZW5ndGgtZm9yLWFuLWhzMjU2',
  expires_in: 3600
}

/** Fastify answering fixed bodies; with `logger`, its default logger at `info` on standard output. */
async function fixed (logger = false): Promise<number> {
  const { default: Fastify } = await import('fastify')
  const app = Fastify({ logger: logger && { level: 'info' } })
  app.get('/api/date/suninfo', async () => FIXED_SUN)
  app.get('/api/user/list', async () => FIXED_LIST)
  app.post('/api/auth/refresh', async () => FIXED_GRANT)
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as AddressInfo).port
}

async function app (databaseUrl: string, users: number): Promise<number> {
  const built = async <T>(path: string): Promise<T> => await import(new URL(`../dist/${path}`, import.meta.url).href) as T
  const { buildApp } = await built<typeof import('../app.js')>('app.js')
  const { loadConfig } = await built<typeof import('../config.js')>('config.js')
  const { seedUsers } = await built<typeof import('../lib/users/seed-users.js')>('lib/users/seed-users.js')
  const { hashPassword } = await built<typeof import('../lib/auth/passwords.js')>('lib/auth/passwords.js')
  const service = await buildApp(
    loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, JWT_SECRET, BODY_LIMIT, RATE_LIMIT_EXEMPT: '127.0.0.1' }),
    { loginThrottle: { maxFailuresPerUsername: 1e9, maxFailuresPerAddress: 1e9 } }
  )
  await service.ready()
  const passwordHash = await hashPassword(BENCH_USER.password)
  await service.database.add({ username: BENCH_USER.username, passwordHash, name: 'Bench User', birthdate: '1990-01-01', gender: 'unspecified', shortDesc: '' })
  if (users > 0) await seedUsers(service.database, { count: users, passwordHash })
  await service.listen({ host: '127.0.0.1', port: 0 })
  return (service.server.address() as AddressInfo).port
}

const SECONDS_PER_DAY = 86_400
/** The contract's altitudes of the Sun's centre, morning and evening field names. */
const THRESHOLDS = [
  ['sunrise', 'sunset', -50 / 60],
  ['civil_twilight_begin', 'civil_twilight_end', -6],
  ['nautical_twilight_begin', 'nautical_twilight_end', -12],
  ['astronomical_twilight_begin', 'astronomical_twilight_end', -18]
] as const

/** Sun events the obvious way: a search of astronomy-engine for each, inside the local mean day. */
function searchedSunEvents (timestamp: number, latitude: number, longitude: number): Record<string, number | null> {
  const astronomy = require('astronomy-engine') as typeof import('astronomy-engine')
  const offset = longitude * (SECONDS_PER_DAY / 360)
  const start = Math.floor((timestamp + offset) / SECONDS_PER_DAY) * SECONDS_PER_DAY - offset
  const end = start + SECONDS_PER_DAY
  const observer = new astronomy.Observer(latitude, longitude, 0)
  const startTime = astronomy.MakeTime(new Date(start * 1000))
  const unix = (time: { date: Date }): number => time.date.getTime() / 1000
  const transit = unix(astronomy.SearchHourAngle(astronomy.Body.Sun, observer, 0, startTime, 1).time)
  const inside = (time: { date: Date } | null, from: number, to: number): number | null =>
    time !== null && unix(time) >= from && unix(time) < to ? Math.round(unix(time)) : null
  const events: Record<string, number | null> = { transit: transit < end ? Math.round(transit) : null }
  const transitTime = astronomy.MakeTime(new Date(transit * 1000))
  for (const [morning, evening, altitude] of THRESHOLDS) {
    events[morning] = inside(astronomy.SearchAltitude(astronomy.Body.Sun, observer, +1, startTime, (transit - start) / SECONDS_PER_DAY, altitude), start, transit)
    events[evening] = inside(astronomy.SearchAltitude(astronomy.Body.Sun, observer, -1, transitTime, (end - transit) / SECONDS_PER_DAY, altitude), transit, end)
  }
  return events
}

async function bare (answer: (request: IncomingMessage, body: string) => unknown): Promise<number> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      let status = 200
      let body: unknown
      try {
        body = answer(request, Buffer.concat(chunks).toString('utf8'))
      } catch {
        // astronomy-engine's searches throw in rare polar cases; a reference still answers.
        status = 500
        body = { error: { code: 500, message: 'Internal server error' } }
      }
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

function bareSun (request: IncomingMessage): unknown {
  const query = new URL(request.url ?? '/', 'http://localhost').searchParams
  const [timestamp, latitude, longitude] = ['timestamp', 'latitude', 'longitude'].map((name) => Number(query.get(name))) as [number, number, number]
  return { meta: { timestamp, latitude, longitude }, data: searchedSunEvents(timestamp, latitude, longitude) }
}

async function bareMarkdown (): Promise<number> {
  const { default: MarkdownIt } = await import('markdown-it')
  // The service's options before issue #37 (lib/markdown/render.ts then): CommonMark, tables and strikethrough, no raw HTML.
  const md = new MarkdownIt('commonmark', { html: false, linkify: false, typographer: false }).enable(['table', 'strikethrough'])
  return await bare((_request, body) => ({ data: md.render((JSON.parse(body) as { markdown: string }).markdown) }))
}

async function bareMarkdownHtml (): Promise<number> {
  const { default: MarkdownIt } = await import('markdown-it')
  const { parseFragment } = await import('parse5')
  const { fromParse5 } = await import('hast-util-from-parse5')
  const { sanitize } = await import('hast-util-sanitize')
  const { toHtml } = await import('hast-util-to-html')
  const { SCHEMA } = await import('../lib/markdown/github-html.js')
  const md = new MarkdownIt('commonmark', { html: true, linkify: false, typographer: false }).enable(['table', 'strikethrough'])
  const sanitized = (html: string): string => toHtml(sanitize(fromParse5(parseFragment(html)) as Parameters<typeof sanitize>[0], SCHEMA))
  return await bare((_request, body) => ({ data: sanitized(md.render((JSON.parse(body) as { markdown: string }).markdown)) }))
}

/**
 * markdown-it as bareMarkdown, with highlight.js on fences through markdown-it's own `highlight` option and
 * KaTeX's MathML for `$…$`, `$$…$$` and math fences: the least a server needs to give the same answers in kind.
 */
async function bareMarkdownHighlightMath (): Promise<number> {
  const { default: MarkdownIt } = await import('markdown-it')
  const { default: hljs } = await import('highlight.js/lib/common')
  const { default: katex } = await import('katex')
  const tex = (source: string, displayMode: boolean): string => katex.renderToString(source, { output: 'mathml', displayMode, throwOnError: false })
  const md = new MarkdownIt('commonmark', {
    html: false,
    linkify: false,
    typographer: false,
    highlight: (code, language) => hljs.getLanguage(language) === undefined ? '' : hljs.highlight(code, { language, ignoreIllegals: true }).value
  }).enable(['table', 'strikethrough'])
  md.inline.ruler.before('escape', 'math', (state, silent) => {
    if (state.src.charCodeAt(state.pos) !== 0x24) return false
    const display = state.src.startsWith('$$', state.pos)
    const open = display ? 2 : 1
    const close = state.src.indexOf(display ? '$$' : '$', state.pos + open)
    if (close === -1 || close === state.pos + open) return false
    if (!silent) state.push('math', '', 0).meta = { source: state.src.slice(state.pos + open, close), display }
    state.pos = close + open
    return true
  })
  md.renderer.rules.math = (tokens, index) => tex((tokens[index]!.meta as { source: string }).source, (tokens[index]!.meta as { display: boolean }).display)
  const fence = md.renderer.rules.fence!
  md.renderer.rules.fence = (tokens, index, options, env, self) =>
    tokens[index]!.info.trim() === 'math' ? tex(tokens[index]!.content, true) : fence(tokens, index, options, env, self)
  return await bare((_request, body) => ({ data: md.render((JSON.parse(body) as { markdown: string }).markdown) }))
}

const [kind, ...args] = process.argv.slice(2)
const starts: Record<string, () => Promise<number>> = {
  app: async () => await app(args[0] ?? '', Number(args[1] ?? 0)),
  fixed: async () => await fixed(),
  'fixed-logged': async () => await fixed(true),
  'bare-sun': async () => await bare(bareSun),
  'bare-markdown': bareMarkdown,
  'bare-markdown-html': bareMarkdownHtml,
  'bare-markdown-highlight-math': bareMarkdownHighlightMath
}
const start = starts[kind ?? '']
if (start !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.send?.({ port: await start() })
  process.on('disconnect', () => process.exit(0))
}
