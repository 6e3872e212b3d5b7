import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyServerOptions, FastifySchema } from 'fastify'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type ValidatorFactory = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>
interface AjvCompilerOptions { customOptions?: Record<string, unknown>, [option: string]: unknown }
/** What the pool builds and takes at run time (its published types say otherwise). */
type RouteValidatorCompiler = (route: { schema: FastifySchema, method: string, url: string, httpPart: string }) => unknown
type CompilerPool = (externalSchemas: unknown, options: AjvCompilerOptions) => RouteValidatorCompiler

/**
 * Query strings and form fields arrive as text, so Ajv coerces them to the schema's types. A JSON
 * body already has types: coercing it would turn `{"markdown": null}` into `""` and
 * `{"username": 5}` into `"5"`. Bodies are validated as sent; form bodies hold only strings, which
 * is what their schemas ask for.
 */
export function validatorCompilers (): SchemaController {
  const buildFromPool = AjvCompiler() as unknown as CompilerPool
  const buildValidator = (externalSchemas: unknown, ajvOptions: AjvCompilerOptions = {}): RouteValidatorCompiler => {
    const coercing = buildFromPool(externalSchemas, ajvOptions)
    const exact = buildFromPool(externalSchemas, { ...ajvOptions, customOptions: { ...ajvOptions.customOptions, coerceTypes: false } })
    return (route) => route.httpPart === 'body' ? exact(route) : coercing(route)
  }
  return { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory } }
}
