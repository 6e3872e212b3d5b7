import { createHash } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { apiErrors, errorResponses, ref, withRateLimitHeaders } from '../../../schemas/common.js'
import { SunInfo, SunInfoQuery } from '../../../schemas/sun.js'
import { sunInfoFor } from '../../../lib/sun/events.js'
import { packageInfo } from '../../../lib/package-info.js'
import { matchesIfNoneMatch } from '../../../lib/http/caching.js'

/** An answer depends only on its query and release: cacheable for a day, since a later release may refine it. */
const CACHE_CONTROL = 'public, max-age=86400'

/** The release and a digest of the answer's schema, so a 304 never confirms an answer of an older shape. */
const ANSWER_VERSION =
  `${packageInfo.version}+${createHash('sha256').update(JSON.stringify(SunInfo)).digest('base64url').slice(0, 8)}`

const suninfo: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/api/date/suninfo', {
    config: { fairShare: 'request' },
    schema: {
      tags: ['sun'],
      operationId: 'getSunInfo',
      security: [],
      summary: 'Sunrise, sunset, transit and twilights of one day at one place',
      description: 'The day is the local mean solar day at the given longitude (UTC + longitude/15 h, ' +
        'midnight to midnight) that contains `timestamp`. Sunrise and sunset put the Sun\'s centre ' +
        'at −0.833° (upper limb on a sea-level horizon with standard refraction); civil, nautical ' +
        'and astronomical twilight at −6°, −12° and −18°. Morning events are before transit, evening ' +
        'events after it, all inside the day; an event that does not happen there (polar day or ' +
        'night, a twilight that lasts all night) is null, and `day` says why: for each pair, whether the ' +
        'Sun\'s centre stays above its altitude all day, stays below it, or crosses it. No token needed.',
      querystring: SunInfoQuery,
      headers: Type.Object({
        'if-none-match': Type.Optional(Type.String({
          description: 'The ETag of an answer the client holds: 304 if it is still the answer'
        }))
      }),
      response: {
        200: ref(SunInfo, withRateLimitHeaders),
        304: Type.Null({ description: 'Not modified: the answer is the one whose ETag the client sent' }),
        ...errorResponses(apiErrors, { 400: 'latitude must be <= 90' })
      }
    }
  }, async (request, reply) => {
    const { timestamp, latitude, longitude } = request.query
    // The validated, normalised query names the answer: no need to compute it to tag it.
    const etag = `"${ANSWER_VERSION}:${timestamp}:${latitude}:${longitude}"`
    reply.header('cache-control', CACHE_CONTROL).header('etag', etag)
    // No body at all (a `null` payload would be serialised as one).
    if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) {
      return await reply.code(304).send(undefined as unknown as null)
    }
    const { data, day } = sunInfoFor(timestamp, latitude, longitude)
    return { meta: { timestamp, latitude, longitude }, data, day }
  })
}

export default suninfo
