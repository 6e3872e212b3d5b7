import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { COMPRESSED } from '../../../lib/http/compressed.js'
import { apiErrors, DEFAULT_PER_PAGE, errorResponses, ref, withRateLimitHeaders } from '../../../schemas/common.js'
import { UserListQuery, UserPage } from '../../../schemas/user.js'
import { agesOn, isOnline, linkedPages, pageWindow, totalPages } from '../../../lib/users/listing.js'
import type { DirectoryEntry } from '../../../lib/store/database.js'
import { ACCESS_TOKEN_REFUSED } from '../../../lib/http/errors.js'

const LIST_PATH = '/api/user/list'

/** Page 1 is the bare path; other pages and a non-default page size travel in the query. */
function pageLink (page: number, perPage: number): string {
  const query = new URLSearchParams()
  if (page !== 1) query.set('page', String(page))
  if (perPage !== DEFAULT_PER_PAGE) query.set('per_page', String(perPage))
  const search = query.toString()
  return search === '' ? LIST_PATH : `${LIST_PATH}?${search}`
}

export interface UserListOptions { onlineWindowSeconds: number }

const list: FastifyPluginAsyncTypebox<UserListOptions> = async (fastify, options) => {
  fastify.get(LIST_PATH, {
    config: { fairShare: 'request' },
    compress: COMPRESSED,
    schema: {
      tags: ['users'],
      operationId: 'listUsers',
      summary: 'One page of the user directory, in id order',
      security: [{ accessToken: [] }],
      querystring: UserListQuery,
      response: {
        200: ref(UserPage, withRateLimitHeaders),
        ...errorResponses([...apiErrors, 403], { 400: 'page must be >= 1', 403: ACCESS_TOKEN_REFUSED })
      }
    },
    preValidation: [fastify.requireAccessToken, fastify.recordActivity]
  }, async (request) => {
    // Ajv has filled in the schema's defaults (useDefaults) before the handler runs.
    const { page, per_page: perPage } = request.query as Required<typeof request.query>
    const { offset, limit } = pageWindow(page, perPage)
    // The count and the users from one snapshot: the answer never disagrees with itself.
    const { userCount: total, users } = await fastify.users.page(offset, limit)
    const lastPage = totalPages(total, perPage)
    const now = new Date()
    const ageOf = agesOn(now)
    const toPublicUser = (user: DirectoryEntry) => ({
      id: String(user.id),
      name: user.name,
      birthdate: user.birthdate,
      gender: user.gender,
      short_desc: user.shortDesc,
      age: ageOf(user.birthdate),
      // This replica's own activity may not be written yet.
      online: isOnline(
        Math.max(user.lastSeenAt ?? 0, fastify.activity.lastSeen(user.id) ?? 0),
        now.getTime(),
        options.onlineWindowSeconds
      )
    })
    return {
      meta: { count_total: total, count_loaded: users.length, current_page: page, total_pages: lastPage },
      data: users.map(toPublicUser),
      links: linkedPages(page, lastPage).map((linked) => pageLink(linked, perPage))
    }
  })
}

export default list
