import t, { type Test } from 'tap'
import createClient, { type Middleware } from 'openapi-fetch'
import type { paths } from '../generated/openapi-typescript/schema.js'
import { addUser, build } from '../support/helper.js'
import { readFileSync } from 'node:fs'
import { inRepository } from '../support/repository.js'

/**
 * A client as its authors would write it from /openapi.json alone: types from openapi-typescript
 * (npm run clients), requests through openapi-fetch, against the app listening on a port. Nothing
 * read from a response is cast: if the document's types were wrong, this file would not compile.
 * A new optional body field that makes a call here fail to compile ("Property … is missing") has a schema `default`:
 * the last test of this file says why, and docs/changing.md what to do instead.
 */
const BODY_LIMIT = 4096

/** The app listening on a random port, with five users; its base URL. */
async function listeningApp (t: Test): Promise<string> {
  const app = await build(t, { BODY_LIMIT: String(BODY_LIMIT) }, { loginThrottle: { maxFailuresPerUsername: 3 } })
  await addUser(app, { username: 'ada', password: 'ada-password-1' })
  for (let n = 1; n <= 4; n++) await addUser(app, { username: `user${n}`, password: `password-${n}` })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  return `http://127.0.0.1:${port}`
}

/** The document's `accessToken` security scheme: an apiKey in the query named access_token. */
function accessTokenInQuery (token: string): Middleware {
  return {
    onRequest ({ request }) {
      const url = new URL(request.url)
      url.searchParams.set('access_token', token)
      return new Request(url, request)
    }
  }
}

const formBody = (body: Record<string, string>): URLSearchParams => new URLSearchParams(body)
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' }

t.test('the operations, through types generated from the document', async (t) => {
  const baseUrl = await listeningApp(t)
  const client = createClient<paths>({ baseUrl })

  const json = await client.POST('/api/auth/login', { body: { username: 'ada', password: 'ada-password-1' } })
  t.equal(json.response.status, 200)
  const tokens = json.data
  if (tokens === undefined) throw new Error('login failed')
  t.match(tokens.access_token, /^ey/)
  t.equal(tokens.expires_in, 3600)

  const form = await client.POST('/api/auth/login', {
    body: { username: 'ada', password: 'ada-password-1' },
    bodySerializer: formBody,
    headers: FORM
  })
  t.equal(form.response.status, 200, 'login with a form body')
  t.type(form.data?.refresh_token, 'string')

  const refreshed = await client.POST('/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } })
  t.equal(refreshed.response.status, 200)
  const accessToken = refreshed.data?.access_token
  if (accessToken === undefined) throw new Error('refresh failed')
  t.notOk('refresh_token' in (refreshed.data ?? {}), 'refresh issues no new refresh token')

  client.use(accessTokenInQuery(accessToken))
  const first = await client.GET('/api/user/list', { params: { query: { per_page: 2 } } })
  t.equal(first.response.status, 200)
  t.same(first.data?.meta, { count_total: 5, count_loaded: 2, current_page: 1, total_pages: 3 })
  t.same(first.data?.data.map((user) => user.id), ['1', '2'])
  const ages: number[] | undefined = first.data?.data.map((user) => user.age)
  t.ok(ages?.every(Number.isInteger))
  const second = await client.GET('/api/user/list', { params: { query: { page: 2, per_page: 2 } } })
  t.same(second.data?.data.map((user) => user.id), ['3', '4'])
  t.same(second.data?.links, ['/api/user/list?per_page=2', '/api/user/list?page=2&per_page=2', '/api/user/list?page=3&per_page=2'])
  const online: boolean | undefined = second.data?.data[0]?.online
  t.type(online, 'boolean')

  // Svalbard at the winter solstice: polar night, so no sunrise, while transit still happens.
  const polar = await client.GET('/api/date/suninfo', { params: { query: { timestamp: 1703073600, latitude: 78.22, longitude: 15.65 } } })
  t.equal(polar.response.status, 200)
  const sunrise: number | null | undefined = polar.data?.data.sunrise
  t.equal(sunrise, null, 'sunrise is null in the polar night, and typed number | null')
  const transit = polar.data?.data.transit
  t.type(transit, 'number')
  t.equal(polar.data?.meta.timestamp, 1703073600)
  // Why sunrise is null: the Sun stays below −0.833° and −6° all day, and reaches −12° and −18°.
  t.same(polar.data?.day, { sunrise_sunset: 'below', civil_twilight: 'below', nautical_twilight: 'crosses', astronomical_twilight: 'crosses' })
  // The generator turns the enum into a union of its values, not a string.
  type Span = NonNullable<typeof polar.data>['day']['sunrise_sunset']
  const exactlyTheEnum: [Span] extends ['above' | 'below' | 'crosses'] ? (['above' | 'below' | 'crosses'] extends [Span] ? true : false) : false = true
  t.ok(exactlyTheEnum)
  // @ts-expect-error a value outside the enum does not type-check
  const outside: Span = 'sideways'
  t.ok(outside)

  const markdown = await client.POST('/api/markdown/parse', { body: { markdown: '# Hi\n\n*there*' } })
  t.equal(markdown.data?.data, '<h1 id="user-content-hi">Hi</h1>\n<p><em>there</em></p>\n')

  // Logout ends the session of the first login; the endpoint needs no access token.
  const anonymous = createClient<paths>({ baseUrl })
  const loggedOut = await anonymous.POST('/api/auth/logout', { body: { refresh_token: tokens.refresh_token } })
  t.equal(loggedOut.response.status, 200)
  const status: 'ok' | undefined = loggedOut.data?.status
  t.equal(status, 'ok')
  const afterLogout = await anonymous.POST('/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } })
  t.equal(afterLogout.error?.error.message, 'Invalid refresh token', 'its refresh token is refused')
  const formLogout = await anonymous.POST('/api/auth/logout', { body: { refresh_token: form.data?.refresh_token ?? '' }, bodySerializer: formBody, headers: FORM })
  t.equal(formLogout.data?.status, 'ok', 'logout with a form body')
  const byAccessToken = await client.GET('/api/user/list')
  t.equal(byAccessToken.error?.error.code, 403, 'and the access tokens of the session')

  const live = await client.GET('/health/live')
  t.equal(live.data?.status, 'ok')
  const ready = await client.GET('/health/ready')
  t.equal(ready.data?.status, 'ok')
})

t.test('each documented error, typed as the error body', async (t) => {
  const baseUrl = await listeningApp(t)
  const client = createClient<paths>({ baseUrl })
  const expectError = (result: { response: Response, error?: { error: { code: number, message: string } } }, status: number, message: string | RegExp) => {
    t.equal(result.response.status, status)
    t.equal(result.error?.error.code, status)
    t.match(result.error?.error.message, message)
  }

  expectError(await client.POST('/api/auth/login', { body: { username: 'ada', password: 'wrong' } }), 403, 'Invalid credentials')
  expectError(await client.POST('/api/auth/login', { body: { username: 'nobody', password: 'wrong' } }), 403, 'Invalid credentials')
  expectError(await client.POST('/api/auth/refresh', { body: { refresh_token: 'not-a-token' } }), 400, 'Invalid refresh token')
  // @ts-expect-error the document says refresh_token is required
  expectError(await client.POST('/api/auth/logout', { body: {} }), 400, 'refresh_token is required')

  const badToken = createClient<paths>({ baseUrl })
  badToken.use(accessTokenInQuery('not-a-token'))
  expectError(await badToken.GET('/api/user/list'), 403, 'Token expired or invalid')
  expectError(await client.GET('/api/user/list'), 403, 'Token expired or invalid')

  expectError(await client.GET('/api/date/suninfo', { params: { query: { timestamp: 1700000000, latitude: 91, longitude: 0 } } }), 400, 'latitude must be <= 90')
  expectError(await client.POST('/api/markdown/parse', {
    body: { markdown: '# x' },
    bodySerializer: (body) => body.markdown,
    headers: { 'Content-Type': 'text/plain' }
  }), 415, 'Unsupported media type')
  expectError(await client.POST('/api/markdown/parse', { body: { markdown: 'x'.repeat(BODY_LIMIT + 1) } }), 413, 'Body too large')

  for (let attempt = 0; attempt < 3; attempt++) await client.POST('/api/auth/login', { body: { username: 'user1', password: 'wrong' } })
  const throttled = await client.POST('/api/auth/login', { body: { username: 'user1', password: 'password-1' } })
  expectError(throttled, 429, 'Too many requests')
  t.match(throttled.response.headers.get('retry-after'), /^\d+$/)
})

interface SchemaObject { $ref?: string, properties?: Record<string, SchemaObject>, required?: string[], default?: unknown }

t.test('no optional request body field has a default, which openapi-typescript would type as required', async (t) => {
  // openapi-typescript (7.x, --default-non-nullable by default) types a property with a `default` as always present:
  // right for an answer, wrong for a request, whose clients would then have to send the field. This is the cause when
  // a new optional body field breaks `npm run check` here. docs/changing.md, "A request field", says what to do.
  const document = JSON.parse(readFileSync(inRepository('openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: SchemaObject }> } }>>
    components: { schemas: Record<string, SchemaObject> }
  }
  const schemas = document.components.schemas
  const resolve = (schema: SchemaObject): SchemaObject => schema.$ref === undefined ? schema : resolve(schemas[schema.$ref.split('/').pop()!]!)
  const withDefaults: string[] = []
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const { schema } of Object.values(operation.requestBody?.content ?? {})) {
        const body = resolve(schema)
        for (const [name, property] of Object.entries(body.properties ?? {})) {
          if (resolve(property).default !== undefined && !(body.required ?? []).includes(name)) withDefaults.push(`${method.toUpperCase()} ${path}: ${name}`)
        }
      }
    }
  }
  t.ok(Object.keys(document.paths).some((path) => path === '/api/markdown/parse'), 'the document is read')
  t.same(withDefaults, [], 'give the default in the description and the handler, not in the schema (docs/changing.md)')
})
