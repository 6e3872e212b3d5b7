import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { COMPRESSED } from '../../lib/http/compressed.js'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { type OpenApiDocument, withOperationExamples } from '../../lib/http/openapi-examples.js'
import { namedSchemas } from '../../schemas/index.js'

/** No `upgrade-insecure-requests`: served over plain HTTP, the browser would upgrade every asset and show nothing. */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  // Swagger UI adds one fixed <style> element; only that one is allowed, by its hash.
  "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"
].join('; ')

/** Generated from the route schemas, so it cannot drift from what the service does; named schemas become components. */
export default fp(async function openapi (fastify: FastifyInstance, options: { version: string }) {
  for (const schema of namedSchemas) fastify.addSchema(schema)

  await fastify.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Meridian',
        version: options.version,
        license: { name: 'Proprietary' },
        description: 'Token login with sessions a user can end (logout), a paged user directory, sun event times ' +
          'and Markdown-to-HTML. ' +
          'Every non-2xx response has the body {"error":{"code","message"}} with code equal to the status.'
      },
      // Relative: the document is right wherever the service is served (behind any host name).
      servers: [{ url: '/', description: 'The service that serves this document' }],
      components: {
        securitySchemes: {
          accessToken: { type: 'apiKey', in: 'query', name: 'access_token', description: 'From /api/auth/login' }
        }
      },
      tags: [
        { name: 'auth', description: 'Login, token refresh and logout' },
        { name: 'users', description: 'The user directory' },
        { name: 'sun', description: 'Sun event times' },
        { name: 'markdown', description: 'Markdown to HTML' },
        { name: 'operations', description: 'Health probes' }
      ]
    },
    transformObject: (document) => 'openapiObject' in document
      ? withOperationExamples(document.openapiObject as OpenApiDocument)
      : document.swaggerObject,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })

  // Cacheable, and compressed or not by what the client accepts: each copy says so (Vary).
  fastify.get('/openapi.json', { schema: { hide: true }, compress: COMPRESSED }, async (_request, reply) => {
    reply.header('vary', 'accept-encoding')
    return fastify.swagger()
  })
  await fastify.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
    // No request to swagger.io's online validator: the page works on a closed network.
    uiConfig: { validatorUrl: null }
  })
}, { name: 'openapi' })
