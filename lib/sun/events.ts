/** The Sun's position cached per UTC midnight and interpolated; events refined by Newton steps (docs/decisions.md). */
import { createRequire } from 'node:module'
import { LRUCache } from 'lru-cache'

/** The CommonJS build: tap's loader takes the ESM build (`.js` without `"type": "module"`) for CommonJS and fails. */
const astronomy = createRequire(import.meta.url)('astronomy-engine') as typeof import('astronomy-engine')
const {
  Body,
  EquatorFromVector,
  GeoVector,
  KM_PER_AU,
  MakeTime,
  RotateVector,
  Rotation_EQJ_EQD: rotationJ2000ToOfDate,
  SiderealTime
} = astronomy

export type UnixSeconds = number

/** The nine events of one local mean day; `null` where the event does not happen in that day. */
export interface SunEvents {
  sunrise: UnixSeconds | null
  sunset: UnixSeconds | null
  transit: UnixSeconds | null
  civil_twilight_begin: UnixSeconds | null
  civil_twilight_end: UnixSeconds | null
  nautical_twilight_begin: UnixSeconds | null
  nautical_twilight_end: UnixSeconds | null
  astronomical_twilight_begin: UnixSeconds | null
  astronomical_twilight_end: UnixSeconds | null
}

/** Where the Sun's centre spends the day relative to a pair's altitude; `crosses`: a pair's event is in the day. */
export type AltitudeSpan = 'above' | 'below' | 'crosses'

export interface SunDay {
  sunrise_sunset: AltitudeSpan
  civil_twilight: AltitudeSpan
  nautical_twilight: AltitudeSpan
  astronomical_twilight: AltitudeSpan
}

export interface SunEventsWithDay {
  data: SunEvents
  day: SunDay
}

/** A local mean solar day, `[start, end)` in UNIX seconds (fractional where the longitude is). */
export interface LocalMeanDay {
  start: number
  end: number
}

export const SECONDS_PER_DAY = 86_400
/** Local mean time runs ahead of UTC by 4 minutes per degree of east longitude. */
const SECONDS_PER_DEGREE_OF_LONGITUDE = SECONDS_PER_DAY / 360
/** `longitude * 240` can miss a whole second by a hair, moving an exact-midnight timestamp into the previous day. */
const WHOLE_SECOND_SNAP = 1e-6

/** Altitudes of the Sun's centre (degrees) that define the events, as the contract fixes them. */
const SUN_ALTITUDE_DEG = {
  /** Upper limb on a sea-level horizon: 16′ semidiameter plus 34′ standard refraction. */
  sunriseSunset: -50 / 60,
  civil: -6,
  nautical: -12,
  astronomical: -18
} as const

const TWO_PI = 2 * Math.PI
const RADIANS_PER_DEGREE = Math.PI / 180
const RADIANS_PER_SIDEREAL_HOUR = Math.PI / 12
const MEAN_SOLAR_RATE = TWO_PI / SECONDS_PER_DAY
/** astronomy-engine counts time in days from 2000-01-01T12:00:00Z. */
const UNIX_AT_J2000 = 946_728_000
const EARTH_EQUATORIAL_RADIUS_KM = 6378.1366

/** Small, so an uncached day costs little (docs/performance.md, "The sun route: where each microsecond goes"). */
const DAYS_PER_BLOCK = 8
/** ≈ 359 years of days, about 5 MB: far more than real traffic needs. */
const MAX_CACHED_BLOCKS = 16_384
const DECLINATION = 0
const EQUATION_OF_TIME = 1
const PARALLAX = 2
const VALUES_PER_NODE = 3
/** Daily nodes used around a request: one day before its first UTC day, four after. */
const NODES_PER_WINDOW = 6
const NODES_BEFORE_FIRST_DAY = 1

/** Newton stops once a step is below this (seconds); the answer is rounded to whole seconds. */
const TIME_TOLERANCE_SECONDS = 1e-3
/** Bisection halves a 12-hour bracket below the tolerance in about 26 steps: ample margin. */
const MAX_ROOT_ITERATIONS = 60
/** The hour-angle rate varies ~4e-4 relative in a day: from a guess within 20 min, step two is within 1 ms. */
const HOUR_ANGLE_ITERATIONS = 2

function wrapToPi (angle: number): number {
  return angle - TWO_PI * Math.round(angle / TWO_PI)
}

/** The local mean solar day at `longitude` (degrees east) containing `timestamp`; ±180 give the same day. */
export function localMeanDay (timestamp: number, longitude: number): LocalMeanDay {
  let offset = longitude * SECONDS_PER_DEGREE_OF_LONGITUDE
  const wholeOffset = Math.round(offset)
  if (Math.abs(offset - wholeOffset) < WHOLE_SECOND_SNAP) offset = wholeOffset
  const start = Math.floor((timestamp + offset) / SECONDS_PER_DAY) * SECONDS_PER_DAY - offset
  return { start, end: start + SECONDS_PER_DAY }
}

/** The Sun at 0h UT of `dayNumber`: declination, equation-of-time angle E (GHA = `2π·UT/day + π + E`), parallax. */
function computeNode (dayNumber: number, into: Float64Array, at: number): void {
  const time = MakeTime((dayNumber * SECONDS_PER_DAY - UNIX_AT_J2000) / SECONDS_PER_DAY)
  const ofDate = EquatorFromVector(RotateVector(rotationJ2000ToOfDate(time), GeoVector(Body.Sun, time, true)))
  const greenwichHourAngle = (SiderealTime(time) - ofDate.ra) * RADIANS_PER_SIDEREAL_HOUR
  into[at + DECLINATION] = ofDate.dec * RADIANS_PER_DEGREE
  into[at + EQUATION_OF_TIME] = wrapToPi(greenwichHourAngle - Math.PI)
  into[at + PARALLAX] = Math.asin(EARTH_EQUATORIAL_RADIUS_KM / (ofDate.dist * KM_PER_AU))
}

/** The ephemeris never goes stale (it depends on the date alone): bounded by count, no TTL. */
const ephemerisBlocks = new LRUCache<number, Float64Array>({ max: MAX_CACHED_BLOCKS })

function ephemerisBlock (blockNumber: number): Float64Array {
  let block = ephemerisBlocks.get(blockNumber)
  if (block === undefined) {
    block = new Float64Array(DAYS_PER_BLOCK * VALUES_PER_NODE)
    const firstDay = blockNumber * DAYS_PER_BLOCK
    for (let day = 0; day < DAYS_PER_BLOCK; day++) computeNode(firstDay + day, block, day * VALUES_PER_NODE)
    ephemerisBlocks.set(blockNumber, block)
  }
  return block
}

function readNodes (firstDay: number, count: number, into: Float64Array): void {
  for (let i = 0; i < count; i++) {
    const day = firstDay + i
    const blockNumber = Math.floor(day / DAYS_PER_BLOCK)
    const block = ephemerisBlock(blockNumber)
    const from = (day - blockNumber * DAYS_PER_BLOCK) * VALUES_PER_NODE
    for (let value = 0; value < VALUES_PER_NODE; value++) {
      into[i * VALUES_PER_NODE + value] = block[from + value] as number
    }
  }
}

/** Scratch for the nodes around one request; requests run one at a time on the event loop. */
const windowNodes = new Float64Array(NODES_PER_WINDOW * VALUES_PER_NODE)

/** Degree-5 Newton polynomial through u = −1 … 4: these values vary over a month or more, so its error < 1 mas. */
class QuinticThroughDailyNodes {
  private readonly c0: number
  private readonly c1: number
  private readonly c2: number
  private readonly c3: number
  private readonly c4: number
  private readonly c5: number
  value = 0
  slope = 0

  constructor (y0: number, y1: number, y2: number, y3: number, y4: number, y5: number) {
    const d1a = y1 - y0; const d1b = y2 - y1; const d1c = y3 - y2; const d1d = y4 - y3; const d1e = y5 - y4
    const d2a = d1b - d1a; const d2b = d1c - d1b; const d2c = d1d - d1c; const d2d = d1e - d1d
    const d3a = d2b - d2a; const d3b = d2c - d2b; const d3c = d2d - d2c
    const d4a = d3b - d3a; const d4b = d3c - d3b
    const d5 = d4b - d4a
    this.c0 = y0
    this.c1 = d1a
    this.c2 = d2a / 2
    this.c3 = d3a / 6
    this.c4 = d4a / 24
    this.c5 = d5 / 120
  }

  evaluate (u: number): void {
    let value = this.c5
    let slope = 0
    slope = slope * (u - 3) + value; value = value * (u - 3) + this.c4
    slope = slope * (u - 2) + value; value = value * (u - 2) + this.c3
    slope = slope * (u - 1) + value; value = value * (u - 1) + this.c2
    slope = slope * u + value; value = value * u + this.c1
    slope = slope * (u + 1) + value; value = value * (u + 1) + this.c0
    this.value = value
    this.slope = slope
  }
}

/** The Sun's altitude at `x` s after `origin` (0h UT of the day's first UTC day), as its sine: no inverse trig. */
class SunOverPlace {
  readonly origin: number
  private readonly sinLatitude: number
  private readonly cosLatitude: number
  private readonly longitude: number
  private readonly declination: QuinticThroughDailyNodes
  private readonly equationOfTime: QuinticThroughDailyNodes
  readonly parallax: number

  hourAngle = 0
  hourAngleRate = 0
  declinationValue = 0
  declinationRate = 0
  altitudeSine = 0
  altitudeSineRate = 0

  constructor (firstUtcDay: number, latitudeDeg: number, longitudeDeg: number) {
    const nodes = windowNodes
    readNodes(firstUtcDay - NODES_BEFORE_FIRST_DAY, NODES_PER_WINDOW, nodes)
    // Equation-of-time angles are wrapped per node; unwrap them against the first one.
    const eot0 = nodes[EQUATION_OF_TIME] as number
    this.origin = firstUtcDay * SECONDS_PER_DAY
    this.declination = new QuinticThroughDailyNodes(
      nodes[DECLINATION] as number,
      nodes[VALUES_PER_NODE + DECLINATION] as number,
      nodes[2 * VALUES_PER_NODE + DECLINATION] as number,
      nodes[3 * VALUES_PER_NODE + DECLINATION] as number,
      nodes[4 * VALUES_PER_NODE + DECLINATION] as number,
      nodes[5 * VALUES_PER_NODE + DECLINATION] as number
    )
    this.equationOfTime = new QuinticThroughDailyNodes(
      eot0,
      eot0 + wrapToPi((nodes[VALUES_PER_NODE + EQUATION_OF_TIME] as number) - eot0),
      eot0 + wrapToPi((nodes[2 * VALUES_PER_NODE + EQUATION_OF_TIME] as number) - eot0),
      eot0 + wrapToPi((nodes[3 * VALUES_PER_NODE + EQUATION_OF_TIME] as number) - eot0),
      eot0 + wrapToPi((nodes[4 * VALUES_PER_NODE + EQUATION_OF_TIME] as number) - eot0),
      eot0 + wrapToPi((nodes[5 * VALUES_PER_NODE + EQUATION_OF_TIME] as number) - eot0)
    )
    this.parallax = nodes[2 * VALUES_PER_NODE + PARALLAX] as number
    const latitude = latitudeDeg * RADIANS_PER_DEGREE
    this.sinLatitude = Math.sin(latitude)
    this.cosLatitude = Math.cos(latitude)
    this.longitude = longitudeDeg * RADIANS_PER_DEGREE
  }

  evaluate (x: number): void {
    const u = x / SECONDS_PER_DAY
    this.declination.evaluate(u)
    this.equationOfTime.evaluate(u)
    const dec = this.declination.value
    const decRate = this.declination.slope / SECONDS_PER_DAY
    const hourAngle = MEAN_SOLAR_RATE * x + Math.PI + this.equationOfTime.value + this.longitude
    const hourAngleRate = MEAN_SOLAR_RATE + this.equationOfTime.slope / SECONDS_PER_DAY
    const sinDec = Math.sin(dec)
    const cosDec = Math.cos(dec)
    const sinH = Math.sin(hourAngle)
    const cosH = Math.cos(hourAngle)
    this.hourAngle = hourAngle
    this.hourAngleRate = hourAngleRate
    this.declinationValue = dec
    this.declinationRate = decRate
    this.altitudeSine = this.sinLatitude * sinDec + this.cosLatitude * cosDec * cosH
    this.altitudeSineRate = decRate * (this.sinLatitude * cosDec - this.cosLatitude * sinDec * cosH) -
      hourAngleRate * this.cosLatitude * cosDec * sinH
  }

  timeOfHourAngle (target: number, guess: number): number {
    let x = guess
    for (let i = 0; i < HOUR_ANGLE_ITERATIONS; i++) {
      this.evaluate(x)
      x += wrapToPi(target - this.hourAngle) / this.hourAngleRate
    }
    return x
  }

  /** Solves `A sin H + Q cos H = P` for H; undefined near a pole, where the declination's drift outruns the circle. */
  extremumNear (guess: number, highest: boolean): number | undefined {
    let x = guess
    for (let i = 0; i < HOUR_ANGLE_ITERATIONS; i++) {
      this.evaluate(x)
      const cosDec = Math.cos(this.declinationValue)
      const a = this.hourAngleRate * this.cosLatitude * cosDec
      const q = this.declinationRate * this.cosLatitude * Math.sin(this.declinationValue)
      const p = this.declinationRate * this.sinLatitude * cosDec
      const r = Math.hypot(a, q)
      if (!(r > Math.abs(p))) return undefined
      const phase = Math.atan2(q, a)
      const offset = Math.asin(p / r)
      const target = highest ? offset - phase : Math.PI - offset - phase
      x += wrapToPi(target - this.hourAngle) / this.hourAngleRate
    }
    return x
  }

  /** Sine of the geocentric altitude at which the topocentric centre is at `altitudeDeg`. */
  thresholdSine (altitudeDeg: number): number {
    const altitude = altitudeDeg * RADIANS_PER_DEGREE
    return Math.sin(altitude + this.parallax * Math.cos(altitude))
  }

  excess (x: number, level: number): number {
    this.evaluate(x)
    return this.altitudeSine - level
  }

  /** Crosses `level` in a monotonic bracket: Newton from `guess`, bisecting when a step leaves it, so it converges. */
  crossing (low: number, high: number, excessAtLow: number, level: number, guess: number): number {
    let a = low
    let b = high
    const lowIsBelow = excessAtLow < 0
    let x = guess > a && guess < b ? guess : (a + b) / 2
    for (let i = 0; i < MAX_ROOT_ITERATIONS; i++) {
      const f = this.excess(x, level)
      if (f === 0) return x
      if ((f < 0) === lowIsBelow) a = x
      else b = x
      const step = f / this.altitudeSineRate
      if (Math.abs(step) < TIME_TOLERANCE_SECONDS) return x - step
      if (b - a < TIME_TOLERANCE_SECONDS) return (a + b) / 2
      const next = x - step
      x = next > a && next < b ? next : (a + b) / 2
    }
    return x
  }

  /** Half the time above `level` (`cos H = (sin h0 − sin φ sin δ) / (cos φ cos δ)`), NaN if none: a first guess. */
  semiDiurnalArc (level: number, dec: number): number {
    const cosHourAngle = (level - this.sinLatitude * Math.sin(dec)) / (this.cosLatitude * Math.cos(dec))
    return Math.abs(cosHourAngle) <= 1 ? Math.acos(cosHourAngle) / MEAN_SOLAR_RATE : Number.NaN
  }
}

interface DayShape {
  transit: number
  /** sin h at transit (clamped into the day): the side of a pair's altitude when it has no event. */
  transitSine: number
  /** The rising stretch before transit, where morning events can be, and sin h at its ends. */
  riseFrom: number
  riseTo: number
  riseFromSine: number
  riseToSine: number
  /** The setting stretch after transit, where evening events can be, and sin h at its ends. */
  setFrom: number
  setTo: number
  setFromSine: number
  setToSine: number
  morningDeclination: number
  eveningDeclination: number
}

function altitudeSineAt (sun: SunOverPlace, x: number): number {
  sun.evaluate(x)
  return sun.altitudeSine
}

function declinationAt (sun: SunOverPlace, x: number): number {
  sun.evaluate(x)
  return sun.declinationValue
}

/** The altitude is monotonic between its peak near transit and the lower culminations, maybe just inside the day. */
function dayShape (sun: SunOverPlace, start: number, end: number): DayShape {
  const halfDay = SECONDS_PER_DAY / 2
  const transit = sun.timeOfHourAngle(0, start + halfDay)
  const split = Math.min(Math.max(transit, start), end)
  const peak = sun.extremumNear(transit, true)
  const lowBefore = sun.extremumNear(transit - halfDay, false)
  const lowAfter = sun.extremumNear(transit + halfDay, false)
  const riseFrom = lowBefore !== undefined && lowBefore > start ? lowBefore : start
  const riseTo = peak !== undefined && peak < split ? Math.max(peak, start) : split
  const setFrom = peak !== undefined && peak > split ? Math.min(peak, end) : split
  const setTo = lowAfter !== undefined && lowAfter < end ? lowAfter : end
  return {
    transit,
    transitSine: altitudeSineAt(sun, split),
    riseFrom,
    riseTo,
    riseFromSine: altitudeSineAt(sun, riseFrom),
    riseToSine: altitudeSineAt(sun, riseTo),
    setFrom,
    setTo,
    setFromSine: altitudeSineAt(sun, setFrom),
    setToSine: altitudeSineAt(sun, setTo),
    morningDeclination: declinationAt(sun, transit - halfDay / 2),
    eveningDeclination: declinationAt(sun, transit + halfDay / 2)
  }
}

interface Pair {
  begin: UnixSeconds | null
  end: UnixSeconds | null
  span: AltitudeSpan
}

/** The span is read off the events, so the two never disagree (docs/decisions.md, "Sun information"). */
function pairOf (sun: SunOverPlace, shape: DayShape, start: number, end: number, altitudeDeg: number): Pair {
  const level = sun.thresholdSine(altitudeDeg)
  let morning: number | null = null
  let evening: number | null = null
  if (shape.riseFrom < shape.riseTo && shape.riseFromSine < level && shape.riseToSine > level) {
    const guess = shape.transit - sun.semiDiurnalArc(level, shape.morningDeclination)
    morning = sun.crossing(shape.riseFrom, shape.riseTo, shape.riseFromSine - level, level, guess)
  }
  if (shape.setFrom < shape.setTo && shape.setFromSine > level && shape.setToSine < level) {
    const guess = shape.transit + sun.semiDiurnalArc(level, shape.eveningDeclination)
    evening = sun.crossing(shape.setFrom, shape.setTo, shape.setFromSine - level, level, guess)
  }
  const begin = roundedInDay(sun, morning, start, end)
  const finish = roundedInDay(sun, evening, start, end)
  const span = begin !== null || finish !== null ? 'crosses' : shape.transitSine > level ? 'above' : 'below'
  return { begin, end: finish, span }
}

function roundedInDay (sun: SunOverPlace, x: number | null, start: number, end: number): UnixSeconds | null {
  return x !== null && x >= start && x < end ? Math.round(sun.origin + x) : null
}

/** Degrees, north and east positive, at sea level; morning events rise before transit, evening ones set after it. */
export function sunInfoFor (timestamp: number, latitude: number, longitude: number): SunEventsWithDay {
  if (!Number.isFinite(timestamp) || !(latitude >= -90 && latitude <= 90) || !(longitude >= -180 && longitude <= 180)) {
    throw new RangeError('sunInfoFor needs a finite timestamp, latitude in [-90, 90] and longitude in [-180, 180]')
  }
  const day = localMeanDay(timestamp, longitude)
  const sun = new SunOverPlace(Math.floor(day.start / SECONDS_PER_DAY), latitude, longitude)
  const start = day.start - sun.origin
  const end = day.end - sun.origin
  const shape = dayShape(sun, start, end)
  const sunriseSunset = pairOf(sun, shape, start, end, SUN_ALTITUDE_DEG.sunriseSunset)
  const civil = pairOf(sun, shape, start, end, SUN_ALTITUDE_DEG.civil)
  const nautical = pairOf(sun, shape, start, end, SUN_ALTITUDE_DEG.nautical)
  const astronomical = pairOf(sun, shape, start, end, SUN_ALTITUDE_DEG.astronomical)
  return {
    data: {
      sunrise: sunriseSunset.begin,
      sunset: sunriseSunset.end,
      transit: roundedInDay(sun, shape.transit, start, end),
      civil_twilight_begin: civil.begin,
      civil_twilight_end: civil.end,
      nautical_twilight_begin: nautical.begin,
      nautical_twilight_end: nautical.end,
      astronomical_twilight_begin: astronomical.begin,
      astronomical_twilight_end: astronomical.end
    },
    day: {
      sunrise_sunset: sunriseSunset.span,
      civil_twilight: civil.span,
      nautical_twilight: nautical.span,
      astronomical_twilight: astronomical.span
    }
  }
}
