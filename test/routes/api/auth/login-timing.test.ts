import t from 'tap'
import argon2 from 'argon2'
import { passwordHashOptions } from '../../../../lib/auth/passwords.js'
import { addUser, build } from '../../../support/helper.js'

// An unknown username must not answer faster than a wrong password, or the time tells which usernames
// exist. So both do the same work: one argon2 verification against a hash of today's cost.
// `npm run bench:login` prints the time each takes.
t.test('unknown user and wrong password do the same work and answer alike', async (t) => {
  const app = await build(t)
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const verifications = t.capture(argon2, 'verify', argon2.verify)
  const costOf = (hash: string) => hash.split('$').slice(1, 4).join('$') // argon2id$v=19$m=…,t=…,p=…
  const failedLogin = async (username: string) => {
    const before = verifications.calls.length
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password: 'a wrong guess' } })
    return { statusCode: response.statusCode, body: response.body, verified: verifications.calls.slice(before).map(({ args }) => costOf(args[0])) }
  }
  const { memoryCost, timeCost, parallelism } = passwordHashOptions
  const todaysCost = `argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}`
  const wrongPassword = await failedLogin('ada')
  const unknownUser = await failedLogin('nobody')
  t.same(wrongPassword.verified, [todaysCost], 'a wrong password: one verification at today\'s cost')
  t.same(unknownUser.verified, [todaysCost], 'an unknown user: one verification at today\'s cost')
  t.same(unknownUser, wrongPassword, 'and the same answer')
})
