import t from 'tap'
import { balancerLog, startCluster } from '../test/cluster/harness.js'

t.test('nginx access line bytes', async (t) => {
  const cluster = await startCluster(t, { network: '127.0.77', env: { LOG_LEVEL: 'info' } })
  await cluster.addUser('ada', 'ada-password')
  const { access_token: token } = await cluster.login('ada', 'ada-password')
  for (let i = 0; i < 50; i++) {
    await cluster.request(`/api/user/list?access_token=${encodeURIComponent(token)}`)
    await cluster.request('/api/date/suninfo?timestamp=1700000000&latitude=52.52&longitude=13.405')
    await cluster.request('/api/markdown/parse', { json: { markdown: '# Hello' } })
  }
  const lines = balancerLog(cluster)
  const bytes = lines.map((line) => Buffer.byteLength(line) + 1)
  t.comment(`${lines.length} lines, mean ${(bytes.reduce((a, b) => a + b, 0) / bytes.length).toFixed(0)} B`)
  t.comment(lines.slice(-3).join('\n'))
})
