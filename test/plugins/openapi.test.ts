import t from 'tap'
import { build } from '../support/helper.js'
import { DOCS_CONTENT_SECURITY_POLICY } from '../../plugins/external/openapi.js'

t.test('/openapi.json is the OpenAPI 3 document of every route', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
  const document = response.json()
  t.match(document.openapi, /^3\./)
  t.same(Object.keys(document.paths).sort(), [
    '/api/auth/login', '/api/auth/logout', '/api/auth/refresh', '/api/date/suninfo', '/api/markdown/parse', '/api/user/list', '/health/live', '/health/ready'
  ])
  for (const name of ['ErrorBody', 'Status', 'LoginRequest', 'RefreshRequest', 'TokenPair', 'AccessTokenGrant', 'User', 'UserPage', 'SunInfo', 'MarkdownRequest', 'MarkdownHtml']) {
    t.ok(document.components.schemas[name], `components.schemas.${name}`)
  }
  t.same(document.components.securitySchemes.accessToken, { type: 'apiKey', in: 'query', name: 'access_token', description: 'From /api/auth/login' })
  const list = document.paths['/api/user/list'].get
  t.same(list.security, [{ accessToken: [] }])
  t.same(Object.keys(list.responses).sort(), ['200', '400', '403', '429', '500', '503'])
  t.match(list.responses['403'].content['application/json'].schema.$ref, /ErrorBody/)
  const login = document.paths['/api/auth/login'].post
  t.ok(login.requestBody.content['application/x-www-form-urlencoded'], 'login documents form bodies')
  t.ok(login.requestBody.content['application/json'], 'and JSON bodies')
  t.same(Object.keys(login.responses).sort(), ['200', '400', '403', '408', '413', '415', '429', '500', '503'], 'login documents 403 and 429')
  const logout = document.paths['/api/auth/logout'].post
  t.same(Object.keys(logout.requestBody.content).sort(), ['application/json', 'application/x-www-form-urlencoded'], 'logout takes what refresh takes')
  t.same(logout.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/RefreshRequest' }, 'the same schema')
  t.same(Object.keys(logout.responses).sort(), ['200', '400', '408', '413', '415', '429', '500', '503'], 'logout has no 403: any token answers 200')
  const sun = document.paths['/api/date/suninfo'].get
  t.same(sun.parameters.map((p: { name: string }) => p.name).sort(), ['if-none-match', 'latitude', 'longitude', 'timestamp'])
  t.same(sun.parameters.find((p: { name: string }) => p.name === 'if-none-match').in, 'header')
  t.same(Object.keys(sun.responses['304']), ['description'], 'a 304 without a body')
})

t.test('every API operation declares the fair share: 429 with Retry-After, and the RateLimit headers on 200 and 429', async (t) => {
  const app = await build(t)
  const document = (await app.inject({ url: '/openapi.json' })).json()
  const apiOperations = Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, ...operation })))
  t.equal(apiOperations.length, 6)
  for (const operation of apiOperations) {
    t.same(Object.keys(operation.responses['429']?.headers ?? {}).sort(), ['ratelimit', 'ratelimit-policy', 'retry-after'], `${operation.key}: 429 with its headers`)
    t.same(Object.keys(operation.responses['200']?.headers ?? {}).sort(), ['ratelimit', 'ratelimit-policy'], `${operation.key}: 200 with the RateLimit headers`)
  }
  for (const path of ['/health/live', '/health/ready']) t.notOk(document.paths[path].get.responses['429'], `${path} is not limited`)
})

t.test('operations have SDK-friendly ids, say which are public, and UNIX seconds are int64', async (t) => {
  const app = await build(t)
  const document = (await app.inject({ url: '/openapi.json' })).json()
  const operations = Object.entries(document.paths as Record<string, Record<string, { operationId: string, security: unknown[], summary: string }>>)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, ...operation })))
  t.same(Object.fromEntries(operations.map((operation) => [operation.key, operation.operationId])), {
    'POST /api/auth/login': 'login',
    'POST /api/auth/refresh': 'refreshToken',
    'POST /api/auth/logout': 'logout',
    'GET /api/user/list': 'listUsers',
    'GET /api/date/suninfo': 'getSunInfo',
    'POST /api/markdown/parse': 'renderMarkdown',
    'GET /health/live': 'getLiveness',
    'GET /health/ready': 'getReadiness'
  })
  for (const operation of operations) {
    t.ok(operation.summary, `${operation.key} has a summary`)
    t.same(operation.security, operation.operationId === 'listUsers' ? [{ accessToken: [] }] : [], `${operation.key} security`)
  }
  const sun = document.paths['/api/date/suninfo'].get
  t.equal(sun.parameters.find((p: { name: string }) => p.name === 'timestamp').schema.format, 'int64')
  const sunInfo = document.components.schemas.SunInfo.properties
  t.equal(sunInfo.meta.properties.timestamp.format, 'int64')
  for (const [name, field] of Object.entries(sunInfo.data.properties as Record<string, { format: string, nullable: boolean }>)) {
    t.same([field.format, field.nullable], ['int64', true], `${name} is a nullable int64`)
  }
})

t.test('every request and response of every operation has an example', async (t) => {
  const app = await build(t)
  const document = (await app.inject({ url: '/openapi.json' })).json()
  for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}) as Array<[string, { example?: unknown }]>) {
        t.ok(media.example, `${method} ${path} request ${type}`)
      }
      for (const [status, response] of Object.entries(operation.responses) as Array<[string, { description: string, content?: Record<string, { example?: any }> }]>) {
        if (status === '304') continue // Not modified: no body to show
        const example = response.content?.['application/json']?.example
        t.ok(example, `${method} ${path} ${status}`)
        if (Number(status) >= 400) t.same(example, { error: { code: Number(status), message: response.description } })
      }
    }
  }
})

t.test('/docs serves a page to read and try the API', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/docs' })
  const page = response.statusCode === 302 ? await app.inject({ url: response.headers.location as string }) : response
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /swagger/i)
  t.equal(page.headers['content-security-policy'], DOCS_CONTENT_SECURITY_POLICY)
  t.notMatch(page.headers['content-security-policy'], /upgrade-insecure-requests/, 'nothing is upgraded to https: Meridian is served over plain HTTP')
})
