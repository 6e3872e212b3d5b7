import { AjvCompiler } from '@fastify/ajv-compiler'
import type { Ajv, ErrorObject, FuncKeywordDefinition } from 'ajv'
import ucs2lengthModule from 'ajv/dist/runtime/ucs2length.js'
import type { FastifyServerOptions, FastifySchema } from 'fastify'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type ValidatorFactory = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>
interface AjvCompilerOptions { customOptions?: Record<string, unknown>, [option: string]: unknown }
/** What the pool builds and takes at run time (its published types say otherwise). */
type RouteValidatorCompiler = (
  route: { schema: FastifySchema, method: string, url: string, httpPart: string }
) => unknown
type CompilerPool = (externalSchemas: unknown, options: AjvCompilerOptions) => RouteValidatorCompiler

// A CommonJS module whose function is its `default` export: Ajv's own count of characters (code points).
const characterCount = ucs2lengthModule.default

/** Ajv's `maxLength`, counting code points only when `length` (UTF-16 units, never fewer) is past the limit. */
function maxLength (limit: number, text: string): boolean {
  if (text.length <= limit || characterCount(text) <= limit) return true
  maxLength.errors = [{
    keyword: 'maxLength',
    message: `must NOT have more than ${limit} characters`,
    params: { limit }
  }]
  return false
}
maxLength.errors = undefined as Array<Partial<ErrorObject>> | undefined

const maxLengthCountingOnlyPastTheLimit: FuncKeywordDefinition = {
  keyword: 'maxLength',
  type: 'string',
  schemaType: 'number',
  errors: true,
  // Where Ajv's own runs, first of the string keywords: a string too long never reaches a pattern.
  before: 'minLength',
  validate: maxLength
}

export function cheapMaxLength (ajv: Ajv): void {
  ajv.removeKeyword('maxLength')
  ajv.addKeyword(maxLengthCountingOnlyPastTheLimit)
}

/** Ajv coerces query strings and form fields, which arrive as text, but no JSON body (`null` would become `""`). */
export function validatorCompilers (): SchemaController {
  const buildFromPool = AjvCompiler() as unknown as CompilerPool
  const buildValidator = (externalSchemas: unknown, ajvOptions: AjvCompilerOptions = {}): RouteValidatorCompiler => {
    const onCreate = ajvOptions.onCreate as ((ajv: Ajv) => void) | undefined
    const withCheapMaxLength = { ...ajvOptions, onCreate: (ajv: Ajv) => { cheapMaxLength(ajv); onCreate?.(ajv) } }
    const coercing = buildFromPool(externalSchemas, withCheapMaxLength)
    const exact = buildFromPool(externalSchemas, {
      ...withCheapMaxLength,
      customOptions: { ...ajvOptions.customOptions, coerceTypes: false }
    })
    return (route) => route.httpPart === 'body' ? exact(route) : coercing(route)
  }
  return { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory } }
}
