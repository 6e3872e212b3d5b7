import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addUser, build, login } from '../../../support/helper.js'
import { forgeries, sessionIdOf } from '../../../support/forge.js'

/** `count` users with cheap fake hashes (these tests never log them in), plus one who can log in. */
async function appWithUsers (t: Parameters<typeof build>[0], count: number, env: Record<string, string> = {}) {
  const app = await build(t, env)
  await addUser(app, { username: 'reader', password: 'reader-password', birthdate: '1990-01-01' })
  for (let i = 2; i <= count; i++) {
    await app.database.add({ username: `user${i}`, passwordHash: 'not-a-hash', name: `User ${i}`, birthdate: '2000-02-29', gender: i % 2 === 0 ? 'female' : 'male', shortDesc: `number ${i}` })
  }
  const { access_token: token } = await login(app, 'reader', 'reader-password')
  return { app, token }
}

const get = async (app: FastifyInstance, query: string) => await app.inject({ url: `/api/user/list${query}` })

t.test('page 1: meta, data and links as the contract gives them (CONTRACT A3)', async (t) => {
  const { app, token } = await appWithUsers(t, 45)
  const response = await get(app, `?access_token=${token}`)
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  const body = response.json()
  t.same(Object.keys(body).sort(), ['data', 'links', 'meta'])
  t.same(body.meta, { count_total: 45, count_loaded: 20, current_page: 1, total_pages: 3 })
  t.same(body.links, ['/api/user/list', '/api/user/list?page=2', '/api/user/list?page=3'])
  t.equal(body.data.length, 20)
  const first = body.data[0]
  t.same(Object.keys(first).sort(), ['age', 'birthdate', 'gender', 'id', 'name', 'online', 'short_desc'])
  t.equal(first.id, '1', 'id is a numeric string')
  t.equal(first.name, 'reader')
  t.equal(first.birthdate, '1990-01-01')
  t.type(first.gender, 'string')
  t.type(first.short_desc, 'string')
  t.ok(Number.isInteger(first.age))
  t.equal(first.online, true, 'the reader just logged in')
  t.equal(body.data[1].online, false, 'never active')
  const ids = body.data.map((user: { id: string }) => Number(user.id))
  t.same(ids, [...ids].sort((a, b) => a - b), 'ascending id order')
})

t.test('pagination arithmetic: last page, past the last page, per_page', async (t) => {
  const { app, token } = await appWithUsers(t, 45)
  const last = (await get(app, `?access_token=${token}&page=3`)).json()
  t.same(last.meta, { count_total: 45, count_loaded: 5, current_page: 3, total_pages: 3 })
  t.same(last.data.map((u: { id: string }) => u.id), ['41', '42', '43', '44', '45'])

  const past = await get(app, `?access_token=${token}&page=9`)
  t.equal(past.statusCode, 200)
  t.same(past.json().data, [])
  t.same(past.json().meta, { count_total: 45, count_loaded: 0, current_page: 9, total_pages: 3 })

  const perPage = (await get(app, `?access_token=${token}&per_page=7&page=2`)).json()
  t.same(perPage.meta, { count_total: 45, count_loaded: 7, current_page: 2, total_pages: 7 })
  t.same(perPage.data.map((u: { id: string }) => u.id), ['8', '9', '10', '11', '12', '13', '14'])
  t.same(perPage.links, [1, 2, 3, 4, 5, 6, 7].map((n) => n === 1 ? '/api/user/list?per_page=7' : `/api/user/list?page=${n}&per_page=7`))

  const huge = await get(app, `?access_token=${token}&page=9007199254740991`)
  t.equal(huge.statusCode, 200)
  t.same(huge.json().data, [])
})

t.test('links stay bounded: first, last and within 5 of the current page', async (t) => {
  const { app, token } = await appWithUsers(t, 60)
  const body = (await get(app, `?access_token=${token}&per_page=1&page=30`)).json()
  t.equal(body.meta.total_pages, 60)
  const pages = body.links.map((link: string) => Number(new URL(link, 'http://x').searchParams.get('page') ?? 1))
  t.same(pages, [1, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 60])
})

t.test('page and per_page must be integers in range: 400 naming the field', async (t) => {
  const { app, token } = await appWithUsers(t, 3)
  const cases: Array<[string, string]> = [
    ['page=0', 'page'], ['page=-1', 'page'], ['page=abc', 'page'], ['page=1.5', 'page'], ['page=', 'page'],
    ['page=1e400', 'page'], ['page=2.0', 'page'], ['page=1e1', 'page'], ['page=0x2', 'page'], ['page=%202', 'page'],
    ['per_page=0', 'per_page'], ['per_page=101', 'per_page'], ['per_page=x', 'per_page']
  ]
  for (const [query, field] of cases) {
    const response = await get(app, `?access_token=${token}&${query}`)
    t.equal(response.statusCode, 400, query)
    t.equal(response.json().error.code, 400)
    t.match(response.json().error.message, field, query)
  }
  for (const query of ['page=abc', 'page=1.5', 'page=1e1']) {
    t.equal((await get(app, `?access_token=${token}&${query}`)).json().error.message, 'page must be integer', `${query}: one wording`)
  }
})

t.test('any problem with the access token answers 403 Token expired or invalid', async (t) => {
  const { app, token } = await appWithUsers(t, 3)
  const user = await app.database.findByUsername('reader')
  const { refresh_token: refreshToken } = await login(app, 'reader', 'reader-password')
  const attempts: Record<string, string> = {
    'no token': '',
    'no token but a bad page': '?page=0',
    'empty token': '?access_token=',
    'refresh token used as access token': `?access_token=${refreshToken}`,
    'token twice': `?access_token=${token}&access_token=${token}`
  }
  // Bent from a token of an open session: each is refused for its own attack.
  t.equal((await get(app, `?access_token=${token}`)).statusCode, 200, 'the session the forgeries claim is open')
  for (const [name, forged] of Object.entries(forgeries(user?.id ?? 0, 'access', sessionIdOf(token)))) {
    attempts[name] = `?access_token=${encodeURIComponent(forged)}`
  }
  for (const [name, query] of Object.entries(attempts)) {
    const response = await get(app, query)
    t.equal(response.statusCode, 403, name)
    t.same(response.json(), { error: { code: 403, message: 'Token expired or invalid' } }, name)
  }
  const bearer = await app.inject({ url: '/api/user/list', headers: { authorization: `Bearer ${token}` } })
  t.equal(bearer.statusCode, 403, 'a Bearer header is not part of the interface')
})

t.test('removing the user or changing the password revokes access tokens at once', async (t) => {
  const { app, token } = await appWithUsers(t, 3)
  await addUser(app, { username: 'grace', password: 'cobol rules' })
  const grace = await login(app, 'grace', 'cobol rules')
  // Each token is used once first: the verified-token memo and the user cache hold it when it is revoked.
  t.equal((await get(app, `?access_token=${token}`)).statusCode, 200)
  t.equal((await get(app, `?access_token=${grace.access_token}`)).statusCode, 200)
  await app.database.changePassword('reader', 'another-hash')
  t.equal((await get(app, `?access_token=${token}`)).statusCode, 403, 'issued before the password change')
  await app.database.remove('grace')
  t.equal((await get(app, `?access_token=${grace.access_token}`)).statusCode, 403, 'user removed')
})

t.test('an expired access token is refused (ACCESS_TOKEN_TTL)', async (t) => {
  const { app, token } = await appWithUsers(t, 1, { ACCESS_TOKEN_TTL: '1' })
  t.equal((await get(app, `?access_token=${token}`)).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 2100))
  t.equal((await get(app, `?access_token=${token}`)).statusCode, 403)
})

t.test('online follows the last activity and ONLINE_WINDOW', async (t) => {
  const { app, token } = await appWithUsers(t, 3, { ONLINE_WINDOW: '60' })
  const user2 = await app.database.findByUsername('user2')
  const user3 = await app.database.findByUsername('user3')
  await app.database.recordActivity(new Map([[user2?.id ?? 0, Date.now() - 30_000], [user3?.id ?? 0, Date.now() - 90_000]]))
  const online = (await get(app, `?access_token=${token}`)).json().data.map((u: { online: boolean }) => u.online)
  t.same(online, [true, true, false])
})

t.test('age is whole years to today, computed at request time', async (t) => {
  const { app, token } = await appWithUsers(t, 2)
  const today = new Date()
  const body = (await get(app, `?access_token=${token}`)).json()
  const leapling = body.data[1]
  t.equal(leapling.birthdate, '2000-02-29')
  const hadBirthday = today.getUTCMonth() > 1 || (today.getUTCMonth() === 1 && today.getUTCDate() >= 29)
  t.equal(leapling.age, today.getUTCFullYear() - 2000 - (hadBirthday ? 0 : 1))
})

t.test('one answer, one snapshot: a user added between the token check and the page read is in both the count and the data', async (t) => {
  const { app, token } = await appWithUsers(t, 3)
  // The token check reads the counters; the user lands right after that read, before the page is read.
  const counters = app.database.counters.bind(app.database)
  let addAfterRead = true
  app.database.counters = async () => {
    const read = await counters()
    if (addAfterRead) {
      addAfterRead = false
      await app.database.add({ username: 'late', passwordHash: 'not-a-hash', name: 'Late', birthdate: '2000-01-01', gender: 'female', shortDesc: '' })
    }
    return read
  }
  const { meta, data } = (await get(app, `?access_token=${token}`)).json()
  t.equal(addAfterRead, false, 'the user was added after the counters were read')
  t.equal(data.length, 4, 'the page shows the user added')
  t.same(meta, { count_total: 4, count_loaded: 4, current_page: 1, total_pages: 1 }, 'and the count agrees with it')
})
