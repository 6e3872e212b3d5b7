import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../../lib/http/errors.js'

interface NumericParameter { name: string, type: 'number' | 'integer' }

/** Plain decimal numerals: what a client means by `latitude=51.5` or `timestamp=-86400`. */
const NUMERAL: Readonly<Record<NumericParameter['type'], RegExp>> = {
  number: /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/,
  integer: /^-?(?:0|[1-9]\d*)$/
}

function numericParameters (querystring: unknown): NumericParameter[] {
  const properties = (querystring as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {}
  return Object.entries(properties)
    .filter(([, schema]) => schema.type === 'number' || schema.type === 'integer')
    .map(([name, schema]) => ({ name, type: schema.type as NumericParameter['type'] }))
}

/** Ajv's coercion takes `0x10`, ` 12`, `Infinity` and `1e400`: numeric query parameters must be finite numerals. */
export default fp(async function strictNumbers (fastify: FastifyInstance) {
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const parameters = numericParameters(route.schema?.querystring)
    if (parameters.length === 0) return
    // A callback hook: a promise per request costs the cheapest route (docs/performance.md, "The sun route").
    const check = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      const query = request.query as Record<string, unknown>
      for (const { name, type } of parameters) {
        const value = query[name]
        if (value === undefined) continue
        const text = Array.isArray(value) && value.length === 1 ? value[0] : value
        if (typeof text !== 'string' || !NUMERAL[type].test(text) || !Number.isFinite(Number(text))) {
          // The wording of a schema failure, so every invalid number reads the same.
          done(new HttpError(400, `${name} must be ${type}`))
          return
        }
      }
      done()
    }
    const existing = route.preValidation
    route.preValidation = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), check]
  })
}, { name: 'strict-numbers' })
