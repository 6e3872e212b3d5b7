/**
 * `npm run bench -- compare REF`: the working tree's `meridian serve` beside the one built from git REF (the last
 * release), route by route in alternating rounds, at 10 and at 32 connections (issue #56). Each route's rate, new ÷
 * old, is guarded (a regression is a defect) as the median of each round's ratio; list and refresh on PostgreSQL ÷
 * on SQLite of the working tree too, with each server's CPU an answer beside the rates; sun beside Fastify's fixed body
 * too (each build ÷ it: what the host does to the route). REF is built once into
 * tmpdir()/meridian-compare/<commit>. COMPARE_ROUTES=refresh,markdown (the routes' first words) runs only those;
 * COMPARE_CONFIGURATION=image runs both builds as the image does (access lines, metrics) instead of quiet.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PLAIN_README } from '../test/support/markdown-corpus.js'
import { type BenchRequest, benchRounds, type ChildServer, type Contender, JSON_HEADERS, log, median, medianRoundRatio, pinServersAwayFromLoad, ratio, roundsOverProcessSets, startServer, type Table } from './harness.js'
import { FLOORS } from './floors.js'
import { listRequest, logIn, postgresUrl, refreshRequest, sqliteUrl, staggeredOver, withServers } from './fixtures.js'
import { type Configuration, startService } from './service.js'
import { sunQueries } from './sun-queries.js'

const CHECKOUT = fileURLToPath(new URL('..', import.meta.url))
const CONNECTIONS = [10, 32] as const
/**
 * Many short rounds: a ratio is the median of its rounds' ratios, and the host's speed drifts between rounds. Over
 * 9 rounds of 4 s refresh read 0.89 and 0.91 against 6d176da; over 21 of 2 s, 0.98 and 1.02 (the same code).
 */
const ROUNDS = benchRounds({ rounds: 21, seconds: 2 })
/** As the seeded directory of the auth part: 1,001 users. */
const USERS = 1000

/** The CLI built from `ref`: its tree from `git archive`, its own locked dependencies (`npm ci`, which builds). */
export function buildRelease (ref: string): { commit: string, cli: string } {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: CHECKOUT, encoding: 'utf8' }).trim()
  const directory = join(tmpdir(), 'meridian-compare', commit)
  const cli = join(directory, 'dist', 'cli.js')
  if (existsSync(cli)) return { commit, cli }
  log(`compare: building ${ref} (${commit.slice(0, 12)}) in ${directory}: npm ci takes a few minutes`)
  rmSync(directory, { recursive: true, force: true })
  mkdirSync(directory, { recursive: true })
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${directory}"`], { cwd: CHECKOUT, stdio: ['ignore', 'ignore', 'inherit'] })
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: directory, stdio: ['ignore', 'ignore', 'inherit'] })
  if (!existsSync(cli)) execFileSync('npm', ['run', 'build'], { cwd: directory, stdio: ['ignore', 'ignore', 'inherit'] })
  return { commit, cli }
}

/**
 * Server processes of each build, each round on one set of them in turn: two processes of one build ran 18 % apart in
 * CPU an answer for their whole life here (sun at 32 connections: 106.7 ÷ 90.1 µs, where the run before read 70.6 ÷
 * 78.5 with the same code), so one process a build compared instances, not builds.
 */
const PROCESSES_PER_BUILD = Number(process.env.COMPARE_PROCESSES ?? 3)

/** Quiet, as #56 measured the builds; `image` to see what the access line and the metrics cost each build. */
function chosenConfiguration (): Configuration {
  const configuration = process.env.COMPARE_CONFIGURATION ?? 'quiet'
  if (configuration !== 'quiet' && configuration !== 'image') throw new Error(`COMPARE_CONFIGURATION: quiet or image, not ${configuration}`)
  return configuration
}

/** One process of each build on SQLite, and on PostgreSQL when there is a server. */
interface ProcessSet {
  old: ChildServer
  new: ChildServer
  oldPostgres?: ChildServer
  newPostgres?: ChildServer
}

export async function compare (table: Table, ref: string): Promise<void> {
  const { commit, cli } = buildRelease(ref)
  const release = `${ref === commit ? commit.slice(0, 7) : ref}`
  const configuration = chosenConfiguration()
  const sets = Array.from({ length: PROCESSES_PER_BUILD }, (_, index) => index)
  // The release's CLI, then the working tree's (the default), in each set.
  const clis = sets.flatMap(() => [cli, undefined])
  const postgres = await Promise.all(clis.map(async () => await postgresUrl()))
  try {
    const onSqlite = clis.map(async (each) => await startService(configuration, sqliteUrl(), USERS, 'exempt', { cli: each }))
    const withPostgres = postgres.every((database) => database !== undefined)
    const onPostgres = withPostgres
      ? clis.map(async (each, index) => await startService(configuration, postgres[index]!.url, USERS, 'exempt', { cli: each }))
      : []
    // Fastify answering a fixed body beside sun: both builds' ratio to it says what the host does to the route.
    await withServers([startServer('fixed'), ...onSqlite, ...onPostgres], async ([fixed, ...servers]) => {
      pinServersAwayFromLoad([fixed!, ...servers])
      const tokens = await Promise.all(servers.map(async (server) => await logIn(server.url)))
      const tokensOf = new Map(servers.map((server, index) => [server, tokens[index]!]))
      const processSets: ProcessSet[] = sets.map((set) => ({
        old: servers[2 * set]!,
        new: servers[2 * set + 1]!,
        ...(withPostgres ? { oldPostgres: servers[clis.length + 2 * set]!, newPostgres: servers[clis.length + 2 * set + 1]! } : {})
      }))
      const contender = (name: string, server: ChildServer, requests: BenchRequest[], setupClient?: Contender['setupClient']): Contender =>
        ({ name, url: server.url, requests, setupClient, pid: server.child.pid })
      const sun = sunQueries()
      const plain: BenchRequest[] = [{ method: 'POST', path: '/api/markdown/parse', headers: JSON_HEADERS, body: JSON.stringify({ markdown: PLAIN_README }) }]
      const byServer = (request: typeof listRequest, name: string, server: ChildServer | undefined): Contender[] =>
        server === undefined ? [] : [contender(name, server, [request(tokensOf.get(server)!)])]
      const routes: Array<{ route: string, contenders: (set: ProcessSet) => Contender[], postgres?: boolean }> = [
        {
          route: 'sun',
          contenders: (set) => [
            contender('old', set.old, sun, staggeredOver(sun)), contender('new', set.new, sun, staggeredOver(sun)),
            contender('fixed body', fixed!, sun, staggeredOver(sun))
          ]
        },
        ...([['list page 1', listRequest], ['refresh', refreshRequest]] as const).map(([route, request]) => ({
          route,
          postgres: withPostgres,
          contenders: (set: ProcessSet) => [
            ...byServer(request, 'old', set.old), ...byServer(request, 'new', set.new),
            ...byServer(request, 'old on PostgreSQL', set.oldPostgres), ...byServer(request, 'new on PostgreSQL', set.newPostgres)
          ]
        })),
        {
          route: `markdown, a plain ${(PLAIN_README.length / 1024).toFixed(1)} KiB document`,
          contenders: (set) => [contender('old', set.old, plain), contender('new', set.new, plain)]
        }
      ]
      // A route is chosen by its first word: sun, list, refresh, markdown.
      const firstWord = (route: string): string => route.split(/[ ,]/, 1)[0]!
      const known = routes.map(({ route }) => firstWord(route))
      const chosen = process.env.COMPARE_ROUTES?.split(',').map((name) => name.trim()) ?? known
      const unknown = chosen.filter((name) => !known.includes(name))
      if (unknown.length > 0) throw new Error(`COMPARE_ROUTES: no route ${unknown.join(', ')} (${known.join(', ')})`)
      for (const connections of CONNECTIONS) {
        for (const { route, contenders, postgres: onBoth } of routes.filter(({ route }) => chosen.includes(firstWord(route)))) {
          log(`compare: ${route}, ${connections} connections, the working tree (new) and ${release} (old), ${configuration}${onBoth === true ? ', on SQLite and on PostgreSQL' : ''}, ${processSets.length} processes of each`)
          // A ratio is the median over every round of every set.
          const { rates, cpuMicrosPerAnswer: cpuRounds } = await roundsOverProcessSets(processSets.map((set) => contenders(set).map((each) => ({ ...each, connections }))), ROUNDS)
          const cpu = (name: string): number => median(cpuRounds[name] ?? [])
          const rateRatio = (a: string, b: string): number => medianRoundRatio(rates[a] ?? [], rates[b] ?? [])
          const at = `${route}, ${connections} connections`
          table.guard(`compare ${at}: new ÷ ${release}`, rateRatio('new', 'old'), FLOORS.newVsRelease, ratio)
          table.note(`compare ${at}: CPU an answer, new ÷ ${release}`, `${cpu('new').toFixed(1)} ÷ ${cpu('old').toFixed(1)} µs`)
          if (rates['fixed body'] !== undefined) {
            table.note(`compare ${at}: new ÷ fixed body, ${release} ÷ fixed body`, `${ratio(rateRatio('new', 'fixed body'))}, ${ratio(rateRatio('old', 'fixed body'))}`)
          }
          if (onBoth !== true) continue
          table.guard(`compare ${at} on PostgreSQL: new ÷ ${release}`, rateRatio('new on PostgreSQL', 'old on PostgreSQL'), FLOORS.newVsRelease, ratio)
          table.note(`compare ${at} on PostgreSQL: CPU an answer, new ÷ ${release}`, `${cpu('new on PostgreSQL').toFixed(1)} ÷ ${cpu('old on PostgreSQL').toFixed(1)} µs`)
          table.guard(`compare ${at}: new, on PostgreSQL ÷ on SQLite`, rateRatio('new on PostgreSQL', 'new'), FLOORS.postgresVsSqlite, ratio)
          table.note(`compare ${at}: new, CPU an answer on PostgreSQL ÷ on SQLite`, `${cpu('new on PostgreSQL').toFixed(1)} ÷ ${cpu('new').toFixed(1)} µs`)
        }
      }
    })
  } finally {
    await Promise.all(postgres.map(async (database) => { await database?.drop() }))
  }
  if (postgres.some((database) => database === undefined)) table.note('compare on PostgreSQL', 'no server')
}
