import { Ajv } from 'ajv'
import fc from 'fast-check'
import t from 'tap'
import { cheapMaxLength } from '../../../lib/http/validator-compilers.js'

t.test('maxLength gives the verdict and the error of Ajv\'s own, for any string and limit', async (t) => {
  const stock = new Ajv({ allErrors: false })
  const cheap = new Ajv({ allErrors: false })
  cheapMaxLength(cheap)
  const character = fc.constantFrom('a', 'é', '😀', '\ud83d', '\ude00', '\n', '"')
  const otherKeywords = fc.constantFrom({}, { minLength: 1 }, { pattern: '^a*$' }, { minLength: 2, pattern: 'é' })
  fc.assert(fc.property(fc.string({ unit: character, maxLength: 40 }), fc.nat({ max: 40 }), otherKeywords, (text, limit, others) => {
    const schema = { type: 'object', properties: { text: { type: 'string', maxLength: limit, ...others } } }
    const expected = stock.compile(schema)
    const actual = cheap.compile(schema)
    const pick = (errors: typeof actual.errors) => JSON.stringify(errors?.map(({ keyword, instancePath, message, params }) => ({ keyword, instancePath, message, params })))
    return actual({ text }) === expected({ text }) && pick(actual.errors) === pick(expected.errors)
  }), { numRuns: 1000 })
  t.ok(cheap.validate({ type: 'string', maxLength: 2 }, '😀😀'), 'a surrogate pair is one character')
  t.notOk(cheap.validate({ type: 'string', maxLength: 2 }, '😀😀a'))
})
