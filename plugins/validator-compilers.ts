import { AjvCompiler } from '@fastify/ajv-compiler'
import type { Ajv, ErrorObject, FuncKeywordDefinition } from 'ajv'
import type { FastifyServerOptions, FastifySchema } from 'fastify'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type ValidatorFactory = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>
interface AjvCompilerOptions { customOptions?: Record<string, unknown>, [option: string]: unknown }
/** What the pool builds and takes at run time (its published types say otherwise). */
type RouteValidatorCompiler = (route: { schema: FastifySchema, method: string, url: string, httpPart: string }) => unknown
type CompilerPool = (externalSchemas: unknown, options: AjvCompilerOptions) => RouteValidatorCompiler

/** Characters as JSON Schema counts them: code points, so a surrogate pair is one. */
function characterCount (text: string): number {
  let count = text.length
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) { count--; index++ }
    }
  }
  return count
}

/**
 * `maxLength` as Ajv has it, counting characters only when it matters. Ajv counts the code points
 * of every string it checks, 8 µs for a 5 KB Markdown document (a twentieth of its render); but a
 * string is never longer in characters than in UTF-16 units, so one whose `length` is within the
 * limit passes without counting. Same verdict, same error as Ajv's own.
 */
function maxLength (limit: number, text: string): boolean {
  if (text.length <= limit || characterCount(text) <= limit) return true
  maxLength.errors = [{ keyword: 'maxLength', message: `must NOT have more than ${limit} characters`, params: { limit } }]
  return false
}
maxLength.errors = [] as Array<Partial<ErrorObject>>

const maxLengthCountingOnlyPastTheLimit: FuncKeywordDefinition = {
  keyword: 'maxLength',
  type: 'string',
  schemaType: 'number',
  errors: true,
  validate: maxLength
}

export function cheapMaxLength (ajv: Ajv): void {
  ajv.removeKeyword('maxLength')
  ajv.addKeyword(maxLengthCountingOnlyPastTheLimit)
}

/**
 * Query strings and form fields arrive as text, so Ajv coerces them to the schema's types. A JSON
 * body already has types: coercing it would turn `{"markdown": null}` into `""` and
 * `{"username": 5}` into `"5"`. Bodies are validated as sent; form bodies hold only strings, which
 * is what their schemas ask for.
 */
export function validatorCompilers (): SchemaController {
  const buildFromPool = AjvCompiler() as unknown as CompilerPool
  const buildValidator = (externalSchemas: unknown, ajvOptions: AjvCompilerOptions = {}): RouteValidatorCompiler => {
    const withCheapMaxLength = { ...ajvOptions, onCreate: cheapMaxLength }
    const coercing = buildFromPool(externalSchemas, withCheapMaxLength)
    const exact = buildFromPool(externalSchemas, { ...withCheapMaxLength, customOptions: { ...ajvOptions.customOptions, coerceTypes: false } })
    return (route) => route.httpPart === 'body' ? exact(route) : coercing(route)
  }
  return { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory } }
}
