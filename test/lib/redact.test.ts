import t from 'tap'
import { redactUrl } from '../../lib/redact.js'

t.test('secret query values are redacted, the rest kept', async (t) => {
  t.equal(redactUrl('/api/user/list?access_token=abc.def.ghi&page=2'), '/api/user/list?access_token=[REDACTED]&page=2')
  t.equal(redactUrl('/x?page=2&ACCESS_TOKEN=a&refresh_token=b&password=c'), '/x?page=2&ACCESS_TOKEN=[REDACTED]&refresh_token=[REDACTED]&password=[REDACTED]')
  t.equal(redactUrl('/x?access%5Ftoken=secret'), '/x?access%5Ftoken=[REDACTED]', 'percent-encoded names')
  t.equal(redactUrl('/x?access_token'), '/x?access_token=[REDACTED]')
  t.equal(redactUrl('/x?%E0%A4%A=1&access_token=s'), '/x?%E0%A4%A=1&access_token=[REDACTED]', 'a malformed escape does not throw')
  t.equal(redactUrl('/api/date/suninfo'), '/api/date/suninfo')
})
