import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { inRepository } from './repository.js'

interface Operation { responses: Record<string, { content?: Record<string, { schema: object }> }> }
interface Document {
  paths: Record<string, Record<string, Operation>>
  components: object
}

/** The published document: the committed copy, which test/openapi-document.test.ts keeps equal to the app's. */
const publishedDocument = JSON.parse(readFileSync(inRepository('openapi.json'), 'utf8')) as Document

/** What a test does with a response that breaks the published document. */
export type Complaint = (message: string, details: Record<string, unknown>) => void

/** `/api/user/list` from Fastify's route URL (`:id` would become `{id}`). */
const openapiPath = (routeUrl: string): string => routeUrl.replace(/:(\w+)/g, '{$1}')

/**
 * Every response the app sends is checked against the published OpenAPI document: the status
 * must be documented for that operation, and the body valid against that status's schema. Routes
 * outside the document (routes a test adds, /docs assets) are left alone, except that an unknown
 * route's 404 must be the documented error body like every other error.
 */
export function checkResponsesAgainstDocument (app: FastifyInstance, complain: Complaint, document: Document = publishedDocument): void {
  // OpenAPI 3.0 schema objects: `nullable`, `example` and the int32/int64 formats.
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  const validators = new Map<string, ValidateFunction>()

  const validatorFor = (key: string, schema: object): ValidateFunction => {
    let validate = validators.get(key)
    if (validate === undefined) {
      // Local `#/components/...` references resolve inside this one root schema.
      validate = ajv.compile({ allOf: [schema], components: document.components })
      validators.set(key, validate)
    }
    return validate
  }

  app.addHook('onSend', async (request, reply, payload) => {
    const routeUrl = request.routeOptions.url
    const method = request.method.toLowerCase()
    const status = reply.statusCode
    const where = { method: request.method, url: request.url, status }
    let schema: object | undefined
    let key: string
    if (routeUrl === undefined) {
      if (status !== 404) return
      key = 'not-found'
      schema = { $ref: '#/components/schemas/ErrorBody' }
    } else {
      const operation = document.paths[openapiPath(routeUrl)]?.[method]
      if (operation === undefined) return
      const response = operation.responses[String(status)]
      if (response === undefined) {
        complain(`${request.method} ${routeUrl} answered ${status}, which its OpenAPI operation does not document`, where)
        return
      }
      key = `${method} ${routeUrl} ${status}`
      schema = response.content?.['application/json']?.schema
    }
    if (schema === undefined) return
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined
    if (text === undefined) {
      complain(`${request.method} ${request.url} answered ${status} with a stream, not the documented JSON`, where)
      return
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      complain(`${request.method} ${request.url} answered ${status} with a body that is not JSON`, { ...where, body: text.slice(0, 200) })
      return
    }
    const validate = validatorFor(key, schema)
    if (!validate(body)) {
      complain(`${request.method} ${request.url} answered ${status} with a body off its OpenAPI schema`, { ...where, errors: validate.errors, body })
    }
  })
}
