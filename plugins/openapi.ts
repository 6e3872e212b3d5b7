import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { type OpenApiDocument, withOperationExamples } from '../lib/openapi-examples.js'
import { namedSchemas } from '../schemas/index.js'

/**
 * The OpenAPI document is generated from the route schemas, so it cannot drift from what
 * the service validates and sends. Named schemas become `components.schemas`.
 */
export default fp(async function openapi (fastify: FastifyInstance, options: { version: string }) {
  for (const schema of namedSchemas) fastify.addSchema(schema)

  await fastify.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Meridian',
        version: options.version,
        license: { name: 'Proprietary' },
        description: 'Token login, a paged user directory, sun event times and Markdown-to-HTML. ' +
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
        { name: 'auth', description: 'Login and token refresh' },
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

  fastify.get('/openapi.json', { schema: { hide: true } }, async () => fastify.swagger())
  await fastify.register(swaggerUi, { routePrefix: '/docs', staticCSP: true })
}, { name: 'openapi' })
