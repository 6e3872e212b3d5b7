import t from 'tap'
import { redactUrl } from '../../../lib/auth/redact.js'

t.test('secret query values are redacted, the rest kept', async (t) => {
  t.equal(redactUrl('/api/user/list?access_token=abc.def.ghi&page=2'), '/api/user/list?access_token=[REDACTED]&page=2')
  t.equal(redactUrl('/x?page=2&ACCESS_TOKEN=a&refresh_token=b&password=c'), '/x?page=2&ACCESS_TOKEN=[REDACTED]&refresh_token=[REDACTED]&password=[REDACTED]')
  t.equal(redactUrl('/x?access%5Ftoken=secret'), '/x?access%5Ftoken=[REDACTED]', 'percent-encoded names')
  t.equal(redactUrl('/x?access_token'), '/x?access_token=[REDACTED]')
  t.equal(redactUrl('/x?%E0%A4%A=1&access_token=s'), '/x?%E0%A4%A=1&access_token=[REDACTED]', 'a malformed escape does not throw')
  t.equal(redactUrl('/api/date/suninfo'), '/api/date/suninfo')
})

t.test('a token is redacted wherever a client put it by mistake', async (t) => {
  const token = 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiYyJ9.eyJzdWIiOiIxIiwidXNlIjoiYWNjZXNzIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg'
  const cases: Array<[string, string]> = [
    [`/api/user/list;access_token=${token}`, 'a path parameter'],
    [`/api/user/list;access_token=${token}?page=2`, 'a path parameter before a query'],
    [`/api/user/list/${token}`, 'a path segment'],
    [`/api/user/list?access_token%3D${token}`, 'a query name with its = encoded'],
    [`/api/user/list?access_token%3d${token}&page=1`, 'the same, lower case'],
    [`/api/user/list?q=${token}`, 'the value of another parameter'],
    [`/api/user/list?${token}`, 'a bare query'],
    [`/api/user/list?access_token=${token.replaceAll('.', '%2E')}`, 'its dots encoded'],
    [`/api/user/list/${token.replaceAll('.', '%2e')}/more`, 'its dots encoded, in the path'],
    [`/api/user/list?x=${token.slice(0, 60)}`, 'cut short'],
    ['/api/user/list;token=not-a-jwt-but-a-secret', 'a secret path parameter of any shape']
  ]
  for (const [url, where] of cases) {
    const redacted = redactUrl(url)
    t.notMatch(redacted, /eyJ|not-a-jwt|c2lnbmF0dXJl/, `${where}: ${redacted}`)
    t.match(redacted, '[REDACTED]', where)
  }
  t.equal(redactUrl(`/api/user/list;access_token=${token}?page=2`), '/api/user/list;access_token=[REDACTED]?page=2', 'the rest is kept')
  t.equal(redactUrl('/api/date/suninfo?timestamp=1700000000&latitude=1&longitude=2'), '/api/date/suninfo?timestamp=1700000000&latitude=1&longitude=2', 'ordinary URLs are untouched')
  t.equal(redactUrl('/api/markdown/parse?eyJ=1'), '/api/markdown/parse?eyJ=1', 'a short eyJ is not a token')
})

t.test('redaction stays linear whatever the URL holds, and catches the rarer disguises', async (t) => {
  for (const filler of ['eyJ', 'eyJ-', 'eyJaaaaaaaaaa']) {
    const url = `/api/user/list/${filler.repeat(Math.ceil(64 * 1024 / filler.length))}`
    const started = performance.now()
    redactUrl(url)
    const ms = performance.now() - started
    t.ok(ms < 50, `64 KB of ${JSON.stringify(filler)} redacted in ${ms.toFixed(1)} ms`)
  }
  const token = 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiYyJ9.eyJzdWIiOiIxIiwidXNlIjoiYWNjZXNzIn0.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg'
  t.notMatch(redactUrl(`/x/${token.replaceAll('.', '%252E')}`), /c2lnbmF0dXJl|eyJzdWIi/, 'dots encoded twice')
  t.equal(redactUrl('/x%3Btoken=secret'), '/x;token=[REDACTED]', 'an encoded ;')
  t.notMatch(redactUrl(`/a/${token}/${token}`), /eyJ/, 'two tokens')
})

t.test('a token whose every character is percent-encoded is redacted once decoded (#59)', async (t) => {
  const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLW9mLWl0'
  const encodeAll = (text: string): string => [...text].map((character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`).join('')
  const encoded = encodeAll(token)
  t.equal(redactUrl(`/api/user/list?q=${encoded}&page=2`), '/api/user/list?q=[REDACTED]&page=2', 'as a value')
  t.equal(redactUrl(`/api/user/list?${encoded}=1&page=2`), '/api/user/list?[REDACTED]=[REDACTED]&page=2', 'as a name')
  t.equal(redactUrl(`/api/user/list?${encoded}`), '/api/user/list?[REDACTED]', 'as a name without a value')
  t.equal(redactUrl(`/api/user/${encoded}?page=2`), '/api/user/[REDACTED]?page=2', 'as a path segment')
  t.equal(redactUrl(`/api/user/${encodeAll(encoded)}`), '/api/user/[REDACTED]', 'encoded twice')
  t.equal(redactUrl('/api/date/suninfo?q=%41%42%43&x=%E0%A4%A'), '/api/date/suninfo?q=%41%42%43&x=%E0%A4%A', 'other escapes, malformed ones included, are kept')
})
