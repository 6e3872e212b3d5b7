import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import t from 'tap'
import { packageInfo } from '../../../../lib/package-info.js'
import { addUser, build } from '../../../support/helper.js'
import { inRepository } from '../../../support/repository.js'

// The CommonJS build, for the reason given in lib/sun/events.ts.
const { Body, Equator, Horizon, Observer } = createRequire(import.meta.url)('astronomy-engine') as typeof import('astronomy-engine')

const URL_PATH = '/api/date/suninfo'
const FIELDS = [
  'sunrise', 'sunset', 'transit',
  'civil_twilight_begin', 'civil_twilight_end',
  'nautical_twilight_begin', 'nautical_twilight_end',
  'astronomical_twilight_begin', 'astronomical_twilight_end'
] as const
type Field = typeof FIELDS[number]
/** The pairs of `day`, each with its altitude (the Sun's centre, degrees) and its two events. */
const PAIRS = [
  { pair: 'sunrise_sunset', altitude: -0.833, morning: 'sunrise', evening: 'sunset' },
  { pair: 'civil_twilight', altitude: -6, morning: 'civil_twilight_begin', evening: 'civil_twilight_end' },
  { pair: 'nautical_twilight', altitude: -12, morning: 'nautical_twilight_begin', evening: 'nautical_twilight_end' },
  { pair: 'astronomical_twilight', altitude: -18, morning: 'astronomical_twilight_begin', evening: 'astronomical_twilight_end' }
] as const satisfies ReadonlyArray<{ pair: string, altitude: number, morning: Field, evening: Field }>
type Pair = typeof PAIRS[number]['pair']
type Span = 'above' | 'below' | 'crosses'

/** The contract's accuracy gate for every event that is not marginal. */
const GATE_SECONDS = 60

const query = (params: Record<string, string>): string => `${URL_PATH}?${new URLSearchParams(params).toString()}`

t.test('answers the nine events and echoes the request', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: query({ timestamp: '1718884800', latitude: '60.5', longitude: '-0.25' }) })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  const body = response.json()
  t.same(Object.keys(body).sort(), ['data', 'day', 'meta'])
  t.same(body.meta, { timestamp: 1718884800, latitude: 60.5, longitude: -0.25 }, 'meta echoes numbers, not strings')
  t.same(Object.keys(body.data).sort(), [...FIELDS].sort())
  for (const field of FIELDS) {
    const value: unknown = body.data[field]
    t.ok(value === null || Number.isInteger(value), `${field} is an integer or null`)
  }
  // 60.5°N at the June solstice: the Sun never gets 12° down, so nautical twilight never begins.
  t.equal(body.data.nautical_twilight_begin, null)
  t.type(body.data.sunrise, 'number')
  t.ok(body.data.sunrise < body.data.transit && body.data.transit < body.data.sunset)
  // At 60.5°N the Sun goes down to about −6.1° at the June solstice: a white night.
  t.same(body.day, { sunrise_sunset: 'crosses', civil_twilight: 'crosses', nautical_twilight: 'above', astronomical_twilight: 'above' },
    'day says why: the Sun stays above −12° and −18°')
})

t.test('answers are cacheable: Cache-Control, an ETag per query, 304 on If-None-Match', async (t) => {
  const app = await build(t)
  const url = query({ timestamp: '1718884800', latitude: '60.5', longitude: '-0.25' })
  const first = await app.inject({ url })
  t.equal(first.headers['cache-control'], 'public, max-age=86400')
  const etag = first.headers.etag as string
  t.match(etag, /^"[!#-~]+"$/, 'a strong ETag of allowed characters')

  const spelledOtherwise = await app.inject({ url: query({ timestamp: '1718884800', latitude: '60.50', longitude: '-0.250' }) })
  t.equal(spelledOtherwise.headers.etag, etag, 'the same query spelled otherwise has the same ETag')
  t.same(spelledOtherwise.json(), first.json())
  const elsewhere = await app.inject({ url: query({ timestamp: '1718884800', latitude: '60.5', longitude: '-0.5' }) })
  t.not(elsewhere.headers.etag, etag, 'another place has another ETag')

  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const revalidated = await app.inject({ url, headers: { 'if-none-match': ifNoneMatch } })
    t.same([revalidated.statusCode, revalidated.body, revalidated.headers.etag, revalidated.headers['cache-control']],
      [304, '', etag, 'public, max-age=86400'], `304 without a body for If-None-Match: ${ifNoneMatch}`)
    t.notOk('content-length' in revalidated.headers && revalidated.headers['content-length'] !== '0', 'and no length of a body')
  }
  const stale = await app.inject({ url, headers: { 'if-none-match': '"1.0.0:0:0:0"' } })
  t.equal(stale.statusCode, 200, 'another ETag gets the answer')
  // The same release tagged the same query before `day` was in the answer: that body is stale.
  const beforeDay = await app.inject({ url, headers: { 'if-none-match': `"${packageInfo.version}:1718884800:60.5:-0.25"` } })
  t.same([beforeDay.statusCode, beforeDay.statusCode === 200 ? Object.keys(beforeDay.json()).sort() : beforeDay.body], [200, ['data', 'day', 'meta']],
    'an ETag from the answer without day gets the new answer, not a 304')

  const invalid = await app.inject({ url: query({ timestamp: '1718884800', latitude: '91', longitude: '0' }), headers: { 'if-none-match': '*' } })
  t.same([invalid.statusCode, invalid.headers.etag, invalid.headers['cache-control']], [400, undefined, undefined], 'errors carry no validator and are not cached')
})

t.test('token and user answers are never stored by a cache', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'right' })
  const loggedIn = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username: 'ada', password: 'right' } })
  t.equal(loggedIn.headers['cache-control'], 'no-store')
  const list = await app.inject({ url: `/api/user/list?access_token=${loggedIn.json<{ access_token: string }>().access_token}` })
  t.same([list.statusCode, list.headers['cache-control']], [200, 'no-store'])
})

t.test('invalid input answers 400 naming the parameter', async (t) => {
  const app = await build(t)
  const valid = { timestamp: '0', latitude: '10', longitude: '20' }
  const cases: Array<[string, Record<string, string | undefined>]> = [
    ['timestamp', { timestamp: undefined }],
    ['timestamp', { timestamp: '' }],
    ['timestamp', { timestamp: 'abc' }],
    ['timestamp', { timestamp: 'NaN' }],
    ['timestamp', { timestamp: 'Infinity' }],
    ['timestamp', { timestamp: '-Infinity' }],
    ['timestamp', { timestamp: '1e400' }],
    ['timestamp', { timestamp: '1.5' }],
    ['timestamp', { timestamp: '-62135596801' }],
    ['timestamp', { timestamp: '253402300800' }],
    ['timestamp', { timestamp: '9007199254740993' }],
    ['latitude', { latitude: undefined }],
    ['latitude', { latitude: '' }],
    ['latitude', { latitude: ' ' }],
    ['latitude', { latitude: 'abc' }],
    ['latitude', { latitude: 'NaN' }],
    ['latitude', { latitude: 'Infinity' }],
    ['latitude', { latitude: '-Infinity' }],
    ['latitude', { latitude: '1e400' }],
    ['latitude', { latitude: '90.0001' }],
    ['latitude', { latitude: '-91' }],
    ['longitude', { longitude: undefined }],
    ['longitude', { longitude: '' }],
    ['longitude', { longitude: 'east' }],
    ['longitude', { longitude: 'NaN' }],
    ['longitude', { longitude: 'Infinity' }],
    ['longitude', { longitude: '-1e400' }],
    ['longitude', { longitude: '180.5' }],
    ['longitude', { longitude: '-181' }]
  ]
  for (const [name, change] of cases) {
    const params = Object.fromEntries(Object.entries({ ...valid, ...change })
      .filter((entry): entry is [string, string] => entry[1] !== undefined))
    const response = await app.inject({ url: query(params) })
    const label = `${name}=${JSON.stringify(change[name] ?? null)}`
    t.equal(response.statusCode, 400, `${label} is refused`)
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
    const body = response.json()
    t.equal(body.error?.code, 400, `${label}: error body`)
    t.match(body.error?.message, new RegExp(`^${name}\\b`), `${label}: "${String(body.error?.message)}" names ${name}`)
  }
  const repeated = await app.inject({ url: `${URL_PATH}?timestamp=0&latitude=1&latitude=2&longitude=0` })
  t.equal(repeated.statusCode, 400, 'a repeated parameter is refused')
})

t.test('unusual number syntax is refused or read as the number it spells, never a failure', async (t) => {
  const app = await build(t)
  const reference = (await app.inject({ url: query({ timestamp: '16', latitude: '0', longitude: '0' }) })).json()
  for (const timestamp of ['0x10', ' 16', '16 ', '+16', '016', '1.6e1', '16.0']) {
    const response = await app.inject({ url: query({ timestamp, latitude: '0', longitude: '0' }) })
    const label = `timestamp ${JSON.stringify(timestamp)}`
    if (response.statusCode === 200) {
      t.same(response.json(), reference, `${label} is read as 16`)
    } else {
      t.equal(response.statusCode, 400, `${label} is refused`)
      t.match(response.json().error?.message, /^timestamp\b/, `${label}: the message names timestamp`)
    }
  }
})

t.test('extreme valid input never fails', async (t) => {
  const app = await build(t)
  for (const timestamp of ['-62135596800', '-62135596799', '0', '-1', '253402300799']) {
    for (const latitude of ['90', '-90', '89.9999', '-89.9999', '0']) {
      for (const longitude of ['180', '-180', '0', '179.9999']) {
        const response = await app.inject({ url: query({ timestamp, latitude, longitude }) })
        t.equal(response.statusCode, 200, `${timestamp}, ${latitude}, ${longitude}`)
        t.type(response.json().data.transit, 'number')
      }
    }
  }
  const east = (await app.inject({ url: query({ timestamp: '1000000000', latitude: '-18.1', longitude: '180' }) })).json()
  const west = (await app.inject({ url: query({ timestamp: '1000000000', latitude: '-18.1', longitude: '-180' }) })).json()
  for (const field of FIELDS) {
    t.ok(Math.abs(east.data[field] - west.data[field]) <= 1, `${field}: +180 and -180 are the same day`)
  }
})

// ---------------------------------------------------------------------------------------------
// The reference: 459 cases from an independent high-precision computation (shared/reference/sun).

interface ReferenceCase {
  id: number
  kind: string
  timestamp: number
  latitude: string
  longitude: string
  day0: number
  ref: Array<number | null>
  marginal?: Partial<Record<Field, string>>
}

interface Figures { errors: number[], nullMismatches: number }

/** The topocentric altitude of the Sun's centre, no refraction, by astronomy-engine. */
function altitudeOfSun (latitude: number, longitude: number, unixSeconds: number): number {
  const observer = new Observer(latitude, longitude, 0)
  const date = new Date(unixSeconds * 1000)
  const sun = Equator(Body.Sun, date, observer, true, true)
  return Horizon(date, observer, sun.ra, sun.dec).altitude
}

/** shared/ is checked out beside the repository. */
const referenceFile = inRepository('..', 'shared', 'reference', 'sun', 'cases.json')

function median (values: number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] as number : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

function describe (figures: Figures): string {
  const timed = figures.errors.length === 0
    ? 'n=0'
    : `n=${figures.errors.length} median=${median(figures.errors)} s max=${Math.max(...figures.errors)} s`
  return `${timed} null mismatches=${figures.nullMismatches}`
}

t.test('agrees with the reference computation', async (t) => {
  t.comment(`reference: ${referenceFile}`)
  const reference = JSON.parse(readFileSync(referenceFile, 'utf8')) as { meta: { fields: string[] }, cases: ReferenceCase[] }
  t.same(reference.meta.fields, FIELDS, 'the reference lists the fields in the order used here')
  t.equal(reference.cases.length, 459)

  const app = await build(t)
  const perField = (): Record<Field, Figures> =>
    Object.fromEntries(FIELDS.map((field): [Field, Figures] => [field, { errors: [], nullMismatches: 0 }])) as Record<Field, Figures>
  const clean = perField()
  const marginal = perField()
  const failures: string[] = []
  const marginalNotes: string[] = []
  const spans = Object.fromEntries(PAIRS.map(({ pair }) => [pair, { above: 0, below: 0, crosses: 0 }])) as Record<Pair, Record<Span, number>>
  const dayFailures: string[] = []
  /**
   * `day` against the reference's events: a pair the reference has an event of crosses; a pair it
   * has neither of is above or below, the side the Sun is on at the reference's transit by
   * astronomy-engine. Marginal events (grazing, at the day's edge) prove nothing either way.
   */
  const checkDay = (item: ReferenceCase, data: Record<Field, number | null>, day: Record<Pair, Span>): void => {
    const transitOffset = item.ref[FIELDS.indexOf('transit')] ?? null
    const altitudeAtTransit = transitOffset === null
      ? Number.NaN
      : altitudeOfSun(Number(item.latitude), Number(item.longitude), item.day0 + transitOffset)
    for (const { pair, altitude, morning, evening } of PAIRS) {
      spans[pair][day[pair]]++
      const where = `case ${item.id} (${item.kind}, ${item.latitude}, ${item.longitude}) ${pair} ${day[pair]}`
      if ((data[morning] !== null || data[evening] !== null) !== (day[pair] === 'crosses')) {
        dayFailures.push(`${where}: disagrees with data's ${String(data[morning])}, ${String(data[evening])}`)
      }
      if (item.marginal?.[morning] !== undefined || item.marginal?.[evening] !== undefined) continue
      const referenceHasEvent = item.ref[FIELDS.indexOf(morning)] !== null || item.ref[FIELDS.indexOf(evening)] !== null
      const expected = referenceHasEvent ? 'crosses' : altitudeAtTransit > altitude ? 'above' : 'below'
      if (day[pair] !== expected) dayFailures.push(`${where}: expected ${expected} (altitude at transit ${altitudeAtTransit.toFixed(3)}°)`)
    }
  }

  for (const item of reference.cases) {
    const response = await app.inject({
      url: query({ timestamp: String(item.timestamp), latitude: item.latitude, longitude: item.longitude })
    })
    if (response.statusCode !== 200) {
      failures.push(`case ${item.id}: status ${response.statusCode} ${response.body}`)
      continue
    }
    const { data, day } = response.json() as { data: Record<Field, number | null>, day: Record<Pair, Span> }
    checkDay(item, data, day)
    FIELDS.forEach((field, i) => {
      const offset = item.ref[i] ?? null
      const expected = offset === null ? null : Math.round(item.day0 + offset)
      const actual = data[field]
      const flag = item.marginal?.[field]
      const figures = flag === undefined ? clean[field] : marginal[field]
      const where = `case ${item.id} (${item.kind}, ${item.latitude}, ${item.longitude}) ${field}`
      if ((expected === null) !== (actual === null)) {
        figures.nullMismatches++
        const note = `${where}: expected ${String(expected)}, got ${String(actual)}`
        if (flag === undefined) failures.push(note)
        else marginalNotes.push(`${where} [${flag}]: expected ${String(expected)}, got ${String(actual)}`)
        return
      }
      if (expected === null || actual === null) return
      const error = Math.abs(actual - expected)
      figures.errors.push(error)
      if (flag === undefined && error > GATE_SECONDS) failures.push(`${where}: off by ${error} s`)
      if (flag !== undefined) marginalNotes.push(`${where} [${flag}]: off by ${error} s`)
    })
  }

  for (const field of FIELDS) {
    t.comment(`${field.padEnd(28)} non-marginal ${describe(clean[field])} | marginal ${describe(marginal[field])}`)
  }
  for (const note of marginalNotes) t.comment(`marginal: ${note}`)
  t.same(failures, [], `every non-marginal event within ${GATE_SECONDS} s and no non-marginal null mismatch`)
  for (const { pair } of PAIRS) t.comment(`day.${pair.padEnd(22)} ${JSON.stringify(spans[pair])}`)
  t.same(dayFailures, [], 'day: crosses where the reference has an event, else the side of the Sun at transit')
  t.ok(PAIRS.every(({ pair }) => spans[pair].above > 0 && spans[pair].below > 0 && spans[pair].crosses > 0),
    'the reference has every value of every pair')
})
