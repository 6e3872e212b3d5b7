import t from 'tap'
import { build } from '../helper.js'

t.test('/openapi.json is the OpenAPI 3 document of every route', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  const document = response.json()
  t.match(document.openapi, /^3\./)
  t.same(Object.keys(document.paths).sort(), [
    '/api/auth/login', '/api/auth/refresh', '/api/date/suninfo', '/api/markdown/parse', '/api/user/list', '/health/live', '/health/ready'
  ])
  for (const name of ['ErrorBody', 'LoginRequest', 'RefreshRequest', 'TokenPair', 'AccessTokenGrant', 'User', 'UserPage', 'SunInfo', 'MarkdownRequest', 'MarkdownHtml']) {
    t.ok(document.components.schemas[name], `components.schemas.${name}`)
  }
  t.same(document.components.securitySchemes.accessToken, { type: 'apiKey', in: 'query', name: 'access_token', description: 'From /api/auth/login' })
  const list = document.paths['/api/user/list'].get
  t.same(list.security, [{ accessToken: [] }])
  t.same(Object.keys(list.responses).sort(), ['200', '400', '403', '500', '503'])
  t.match(list.responses['403'].content['application/json'].schema.$ref, /ErrorBody/)
  const login = document.paths['/api/auth/login'].post
  t.ok(login.requestBody.content['application/x-www-form-urlencoded'], 'login documents form bodies')
  t.ok(login.requestBody.content['application/json'], 'and JSON bodies')
  t.same(Object.keys(login.responses).sort(), ['200', '400', '403', '413', '415', '429', '500', '503'], 'login documents 403 and 429')
  t.notOk(document.paths['/api/auth/refresh'].post.responses['429'], 'only login is throttled')
  const sun = document.paths['/api/date/suninfo'].get
  t.same(sun.parameters.map((p: { name: string }) => p.name).sort(), ['latitude', 'longitude', 'timestamp'])
})

t.test('/docs serves a page to read and try the API', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/docs' })
  const page = response.statusCode === 302 ? await app.inject({ url: response.headers.location as string }) : response
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /swagger/i)
})
