import t from 'tap'
import { addUser, build } from '../../../helper.js'

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

// A statistical check that the two failure paths do the same work (one argon2 verification),
// with a wide band and interleaved tries so machine noise hits both alike.
t.test('unknown user and wrong password take statistically the same time', async (t) => {
  const app = await build(t, {}, { loginThrottle: { maxFailuresPerUsername: 1000, maxFailuresPerAddress: 1000 } })
  await addUser(app, { username: 'ada', password: 'correct horse' })
  const timeLogin = async (username: string) => {
    const started = process.hrtime.bigint()
    const response = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password: 'a wrong guess' } })
    t.equal(response.statusCode, 403)
    return Number(process.hrtime.bigint() - started) / 1e6
  }
  await timeLogin('ada')
  await timeLogin('warm-up-unknown')
  const wrongPassword: number[] = []
  const unknownUser: number[] = []
  for (let i = 0; i < 25; i++) {
    wrongPassword.push(await timeLogin('ada'))
    unknownUser.push(await timeLogin(`nobody-${i}`))
  }
  const ratio = median(unknownUser) / median(wrongPassword)
  t.comment(`median wrong password ${median(wrongPassword).toFixed(1)} ms, unknown user ${median(unknownUser).toFixed(1)} ms, ratio ${ratio.toFixed(3)}`)
  t.ok(ratio >= 0.8 && ratio <= 1.25, `ratio ${ratio.toFixed(3)} inside [0.8, 1.25]`)
})
