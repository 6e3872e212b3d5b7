import { Type, type Static } from '@sinclair/typebox'
import { Int64 } from './common.js'

/** Years 0001 to 9999; far from now astronomy-engine's ΔT is an extrapolation, as is anyone's. */
const MIN_SUPPORTED_TIMESTAMP = -62_135_596_800
const MAX_SUPPORTED_TIMESTAMP = 253_402_300_799

export const SunInfoQuery = Type.Object({
  timestamp: Int64({
    minimum: MIN_SUPPORTED_TIMESTAMP,
    maximum: MAX_SUPPORTED_TIMESTAMP,
    description: 'UNIX seconds (negative before 1970): the answer is for the local mean solar day ' +
      'containing this instant. Supported: 0001-01-01T00:00:00Z (-62135596800) to ' +
      '9999-12-31T23:59:59Z (253402300799); far from the present the Earth\'s rotation is extrapolated.'
  }),
  latitude: Type.Number({
    minimum: -90,
    maximum: 90,
    description: 'Degrees, north positive'
  }),
  longitude: Type.Number({
    minimum: -180,
    maximum: 180,
    description: 'Degrees, east positive; also fixes the local mean day (UTC + longitude/15 hours)'
  })
})
export type SunInfoQuery = Static<typeof SunInfoQuery>

function eventTime (description: string) {
  return Type.Union([Int64(), Type.Null()], {
    description: `${description} UNIX seconds, rounded; null when it does not happen in that day.`
  })
}

export const SunEventTimes = Type.Object({
  sunrise: eventTime('Upper limb rises over a sea-level horizon (centre at −0.833°), before transit.'),
  sunset: eventTime('Upper limb sets below a sea-level horizon (centre at −0.833°), after transit.'),
  transit: eventTime('Upper culmination: the Sun crosses the local meridian.'),
  civil_twilight_begin: eventTime('Centre rises through −6°, before transit.'),
  civil_twilight_end: eventTime('Centre sets through −6°, after transit.'),
  nautical_twilight_begin: eventTime('Centre rises through −12°, before transit.'),
  nautical_twilight_end: eventTime('Centre sets through −12°, after transit.'),
  astronomical_twilight_begin: eventTime('Centre rises through −18°, before transit.'),
  astronomical_twilight_end: eventTime('Centre sets through −18°, after transit.')
}, { additionalProperties: false })

const ALTITUDE_SPANS = ['above', 'below', 'crosses'] as const

// One string enum, not a union of literals (TypeBox's anyOf of one-value enums), so generators read it as an enum.
function altitudeSpan (pair: string, altitude: string, meaning = '') {
  return Type.Unsafe<typeof ALTITUDE_SPANS[number]>({
    type: 'string',
    enum: [...ALTITUDE_SPANS],
    description: `${pair}: whether the Sun's centre stays above ${altitude} all day, stays below it all day, ` +
      'or crosses it (then at least one event of the pair is in `data`; the other may be null when its ' +
      `crossing falls outside the day).${meaning}`
  })
}

export const SunDay = Type.Object({
  sunrise_sunset: altitudeSpan(
    'Sunrise and sunset', '−0.833°', ' "above" is the midnight Sun, "below" the polar night.'
  ),
  civil_twilight: altitudeSpan('Civil twilight', '−6°'),
  nautical_twilight: altitudeSpan('Nautical twilight', '−12°'),
  astronomical_twilight: altitudeSpan(
    'Astronomical twilight', '−18°', ' "above" is a night that never gets fully dark.'
  )
}, {
  additionalProperties: false,
  description: 'For each pair of events, where the Sun spends the day that `data` describes: why an event is null'
})

export const SunInfo = Type.Object({
  meta: Type.Object({
    timestamp: Int64({ description: 'The requested instant, as sent' }),
    latitude: Type.Number({ description: 'The requested latitude, as sent' }),
    longitude: Type.Number({ description: 'The requested longitude, as sent' })
  }, { additionalProperties: false }),
  data: SunEventTimes,
  day: SunDay
}, {
  $id: 'SunInfo',
  additionalProperties: false,
  description: 'Sun events of the local mean solar day (UTC + longitude/15 h) containing the timestamp',
  // Greenwich, 14 November 2023.
  examples: [{
    meta: { timestamp: 1700000000, latitude: 51.4779, longitude: -0.0015 },
    data: {
      sunrise: 1699946139,
      sunset: 1699978352,
      transit: 1699962263,
      civil_twilight_begin: 1699943932,
      civil_twilight_end: 1699980557,
      nautical_twilight_begin: 1699941497,
      nautical_twilight_end: 1699982990,
      astronomical_twilight_begin: 1699939142,
      astronomical_twilight_end: 1699985343
    },
    day: {
      sunrise_sunset: 'crosses',
      civil_twilight: 'crosses',
      nautical_twilight: 'crosses',
      astronomical_twilight: 'crosses'
    }
  }]
})
export type SunInfo = Static<typeof SunInfo>
