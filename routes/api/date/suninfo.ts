import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { commonErrors, errorResponses, ref } from '../../../schemas/common.js'
import { SunInfo, SunInfoQuery } from '../../../schemas/sun.js'
import { sunEventsFor } from '../../../lib/sun.js'

const suninfo: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/api/date/suninfo', {
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
        'night, a twilight that lasts all night) is null. No token needed.',
      querystring: SunInfoQuery,
      response: { 200: ref(SunInfo), ...errorResponses(commonErrors, { 400: 'latitude must be <= 90' }) }
    }
  }, async (request) => {
    const { timestamp, latitude, longitude } = request.query
    return { meta: { timestamp, latitude, longitude }, data: sunEventsFor(timestamp, latitude, longitude) }
  })
}

export default suninfo
