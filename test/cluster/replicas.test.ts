import { connect } from 'node:net'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { balancerLog, clusterTestSkip, postgresBaseUrl, redisBaseUrl, startCluster, STOCK_NGINX_CONFIG, type Cluster } from './harness.js'
import { proxyInFrontOf } from '../support/tcp-proxy.js'
import { assertNoTokensInLogs } from './log-secrets.js'

/** The contract's bound for a revocation to hold on every replica. */
const REVOCATION_BOUND_MS = 1000
/** How long `online` may take to show on another replica (writes of `last_seen` may be batched). */
const ONLINE_BOUND_MS = 3000

const listPath = (token: string) => `/api/user/list?per_page=100&access_token=${encodeURIComponent(token)}`

/**
 * Polls replica `index` with `token` until it is refused; resolves to the time of the first
 * refusal (performance.now()), or rejects after `giveUpMs`.
 */
async function firstRefusal (cluster: Cluster, index: number, token: string, giveUpMs: number): Promise<number> {
  const deadline = performance.now() + giveUpMs
  while (performance.now() < deadline) {
    const answer = await cluster.requestReplica(index, listPath(token))
    if (answer.status === 403) return performance.now()
    if (answer.status !== 200) throw new Error(`replica ${index} answered ${answer.status}: ${answer.body}`)
    await sleep(20)
  }
  throw new Error(`replica ${index} still accepted the token after ${giveUpMs} ms`)
}

/** IPv4 address and port as /proc/net/tcp writes them: little-endian hex. */
function procNetTcpEndpoint (host: string, port: number): string {
  const address = Buffer.from(host.split('.').map(Number)).readUInt32LE().toString(16).toUpperCase().padStart(8, '0')
  return `${address}:${port.toString(16).toUpperCase().padStart(4, '0')}`
}

/**
 * The TCP connections between nginx and any replica, open or in TIME_WAIT (a connection closed
 * after one request stays listed for a minute on the side that closed it first, which is the
 * replica's without keep-alive), each as "nginx endpoint>replica endpoint".
 */
function balancerConnections (cluster: Cluster): Set<string> {
  const balancerAddress = procNetTcpEndpoint(cluster.balancer.host, 0).slice(0, 8)
  const replicas = new Set(cluster.replicas.map((replica) => procNetTcpEndpoint(replica.endpoint.host, replica.endpoint.port)))
  const connections = new Set<string>()
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local = '', remote = ''] = line.trim().split(/\s+/)
    if (local.startsWith(`${balancerAddress}:`) && replicas.has(remote)) connections.add(`${local}>${remote}`)
    if (remote.startsWith(`${balancerAddress}:`) && replicas.has(local)) connections.add(`${remote}>${local}`)
  }
  return connections
}

/** At most this many connections to the replicas serve the 40 requests, with keep-alive. */
const KEEPALIVE_CONNECTIONS_BOUND = 8

/** Sends 40 requests through the balancer, one after another; how many connections to the replicas nginx opened for them. */
async function connectionsOpenedFor40Requests (t: Test, cluster: Cluster): Promise<number> {
  const before = balancerConnections(cluster)
  const statuses = new Set<number>()
  for (let n = 0; n < 40; n++) statuses.add((await cluster.request('/api/date/suninfo?timestamp=1700000000&latitude=0&longitude=0')).status)
  t.same([...statuses], [200], 'every request answered')
  const opened = [...balancerConnections(cluster)].filter((connection) => !before.has(connection)).length
  t.comment(`40 requests through nginx opened ${opened} new connection(s) to the replicas`)
  return opened
}

/**
 * Twenty failed logins through the balancer from one client address, each claiming other
 * addresses in X-Forwarded-For, then 429 for that address only.
 */
async function throttlesPerClientAddress (t: Test, cluster: Cluster): Promise<void> {
  await cluster.addUser('address-user', 'address-password')
  // Client addresses of their own: no earlier test has counted a failure against them.
  const attacker = cluster.otherClientAddresses[1] as string
  const bystander = cluster.otherClientAddresses[2] as string
  // Each guess names another user (the per-username limit never trips) and claims to come from
  // elsewhere: the bystander, the balancer itself, a chain, or nonsense.
  const claims = [bystander, cluster.balancer.host, `${cluster.balancer.host}, ${bystander}`, 'unknown']
  const statuses: number[] = []
  let throttled
  for (let n = 0; n < 30; n++) {
    const answer = await cluster.request('/api/auth/login', {
      from: attacker,
      headers: { 'x-forwarded-for': claims[n] ?? `198.51.100.${n}, 127.0.1.${100 + n}` },
      form: { username: `nobody-${n}`, password: 'guess' }
    })
    statuses.push(answer.status)
    if (answer.status === 429) { throttled = answer; break }
  }
  const failures = statuses.filter((status) => status === 403).length
  t.comment(`per address through nginx with a spoofed X-Forwarded-For on every request: ${failures} failures (403), then ${statuses.at(-1)} with Retry-After ${String(throttled?.headers['retry-after'])}`)
  t.equal(failures, 20, 'the limit of 20 failures per client address holds')
  t.equal(throttled?.status, 429, 'the next attempt is throttled')
  const rightPassword = { form: { username: 'address-user', password: 'address-password' } }
  t.equal((await cluster.request('/api/auth/login', { from: attacker, ...rightPassword })).status, 429, 'the throttled address cannot log in at all')
  for (const replica of cluster.replicas) {
    const direct = await cluster.requestReplica(replica.index, '/api/auth/login', { from: attacker, headers: { 'x-forwarded-for': bystander }, ...rightPassword })
    t.equal(direct.status, 429, `replica ${replica.index} reached directly ignores X-Forwarded-For from anyone but nginx`)
  }

  const bystanderGuess = await cluster.request('/api/auth/login', { from: bystander, form: { username: 'nobody-else', password: 'guess' } })
  t.equal(bystanderGuess.status, 403, 'another client address is counted apart (its failure is its first)')
  t.equal((await cluster.request('/api/auth/login', { from: bystander, ...rightPassword })).status, 200, 'and it logs in')
}

t.test('two replicas behind nginx on PostgreSQL and Redis', { skip: clusterTestSkip }, async (t) => {
  const started = performance.now()
  // Replica 0 reaches PostgreSQL through a proxy the test can cut: a replica that loses its database (#59). Every
  // replica reaches Redis through another: the login throttle's store away.
  const replica0Database = await proxyInFrontOf(t, postgresBaseUrl)
  const redisProxy = await proxyInFrontOf(t, redisBaseUrl)
  const cluster = await startCluster(t, { databaseVia: [replica0Database.endpoint, undefined], redisVia: redisProxy.endpoint })
  t.comment(`cluster ready in ${Math.round(performance.now() - started)} ms: nginx ${cluster.balancer.host}:${cluster.balancer.port}, ` +
    `replicas ${cluster.replicas.map((r) => `${r.endpoint.host}:${r.endpoint.port}`).join(', ')}, client ${cluster.clientAddress}`)
  const { replicas } = cluster

  await t.test('the balancer serves the API and keeps /metrics to itself', async (t) => {
    const sun = await cluster.request('/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015')
    t.equal(sun.status, 200, sun.body)
    t.match(sun.headers['content-type'], /^application\/json/)
    for (const path of ['/metrics', '/metrics/', '//metrics', '/%6Detrics']) {
      const metrics = await cluster.request(path)
      t.equal(metrics.status, 404, `${path} is not proxied`)
      t.same(metrics.json(), { error: { code: 404, message: 'Not found' } })
    }
  })

  await t.test('every answer through the balancer is the API\'s JSON with nosniff, nginx\'s own answers included (413 past its body limit)', async (t) => {
    const proxied = await cluster.request('/api/date/suninfo?timestamp=1700000000&latitude=51.4779&longitude=-0.0015')
    t.equal(proxied.headers['x-content-type-options'], 'nosniff', 'a replica\'s answer, once')
    const metrics = await cluster.request('/metrics')
    t.equal(metrics.headers['x-content-type-options'], 'nosniff', 'nginx\'s 404')
    // Past client_max_body_size (2 MiB): nginx refuses it before any replica sees it.
    const tooLarge = await cluster.request('/api/markdown/parse', { json: { markdown: 'x'.repeat(3 * 1024 * 1024) }, agent: false })
    t.equal(tooLarge.status, 413)
    t.match(tooLarge.headers['content-type'], /^application\/json/)
    t.same(tooLarge.json(), { error: { code: 413, message: 'Body too large' } }, 'the API\'s error body, not nginx\'s HTML page')
    t.equal(tooLarge.headers['x-content-type-options'], 'nosniff')
  })

  await t.test('nginx\'s own refusals of a malformed request are the API\'s JSON with nosniff (#59)', async (t) => {
    const cases: Array<[string, string, number]> = [
      ['a bad request line', 'GET /api/date/suninfo HTTP/1.1 extra\r\nHost: x\r\n\r\n', 400],
      ['a bad URL', 'GET /api/%00 HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['a URI too long', `GET /api/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
      ['a header too large', `GET /api/date/suninfo HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      ['the internal error pages themselves', 'GET /meridian-errors/400 HTTP/1.1\r\nHost: x\r\n\r\n', 404]
    ]
    for (const [what, request, status] of cases) {
      const answer = await rawExchange(cluster.balancer, request)
      const [head = '', body = ''] = answer.split('\r\n\r\n')
      t.match(head, new RegExp(`^HTTP/1.1 ${status} `), `${what}: ${status}`)
      t.match(head, /\r\ncontent-type: application\/json/i, `${what}: JSON`)
      t.match(head, /\r\nx-content-type-options: nosniff/i, `${what}: nosniff`)
      t.equal(JSON.parse(body).error.code, status, `${what}: the API's error body`)
    }
  })

  await t.test('a large answer comes through the balancer compressed, as the replica compressed it', async (t) => {
    const markdown = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} with **bold** and a [link](https://example.com/${i}).`).join('\n\n')
    const answer = await cluster.request('/api/markdown/parse', { json: { markdown }, headers: { 'accept-encoding': 'gzip, br' } })
    t.equal(answer.status, 200)
    t.equal(answer.headers['content-encoding'], 'br')
    t.match(answer.headers.vary, /accept-encoding/i)
  })

  await t.test('a request id sent through the balancer reaches the replica and comes back; nginx makes one otherwise', async (t) => {
    const sent = await cluster.request('/health/live', { headers: { 'x-request-id': 'client-trace-42' } })
    t.equal(sent.headers['x-request-id'], 'client-trace-42')
    const made = await cluster.request('/health/live')
    const replaced = await cluster.request('/health/live', { headers: { 'x-request-id': 'not a token' } })
    for (const answer of [made, replaced]) t.match(answer.headers['x-request-id'], /^[0-9a-f]{32}$/, "nginx's $request_id, used by the replica")
    t.not(made.headers['x-request-id'], replaced.headers['x-request-id'])
  })

  await t.test('nginx keeps its connections to the replicas open between requests', async (t) => {
    const opened = await connectionsOpenedFor40Requests(t, cluster)
    t.ok(opened <= KEEPALIVE_CONNECTIONS_BOUND, `a few connections serve them all (keepalive), not one per request (${opened})`)
  })

  await t.test('a token put in the path by mistake reaches neither nginx\'s access log nor a replica\'s', async (t) => {
    await cluster.addUser('misplaced-token-user', 'misplaced-token-password')
    const { access_token: access, refresh_token: refresh } = await cluster.login('misplaced-token-user', 'misplaced-token-password')
    const linesBefore = balancerLog(cluster).length
    for (const token of [access, refresh]) {
      // Every character percent-encoded (#59): as a query value, a query name, a path segment.
      const encoded = [...token].map((character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`).join('')
      for (const path of [`/api/user/list;access_token=${token}`, `/api/user/list/${token}`, `/api/user/list?access_token%3D${token}`,
        `/api/user/list/${token.replaceAll('.', '%2E')}`, `/api/nothing-here/${token}?page=1`,
        `/api/x%0A/${token}`, `/api/user/list/${token}/${token}`, `/api/user/list/${token.replaceAll('.', '%252E')}`,
        `/api/user/list?q=${encoded}`, `/api/user/list?${encoded}=1`, `/api/user/${encoded}`]) {
        const answer = await cluster.request(path)
        t.ok(answer.status >= 400, `${path.slice(0, 40)}… answers ${answer.status}`)
      }
    }
    // Only these requests' lines: the login's may reach the shipped log after linesBefore was read.
    const logged = balancerLog(cluster, linesBefore).filter((line) => /"GET \/api\/(user|nothing-here|x)/.test(line))
    t.equal(logged.length, 22, 'nginx logged each request')
    t.ok(logged.some((line) => line.includes('/api/user/list/[REDACTED]')) && logged.some((line) => line.includes(';access_token=[REDACTED]')), 'with the token\'s place shown redacted')
    // The replicas write their lines in batches: give them a flush.
    await sleep(500)
    assertNoTokensInLogs(t, cluster.directory)
  })

  await t.test('a token minted by one replica works on every other', async (t) => {
    await cluster.addUser('token-user', 'token-password')
    for (const minter of replicas) {
      const { access_token: token } = await cluster.login('token-user', 'token-password', minter.index)
      for (const other of replicas) {
        const page = await cluster.requestReplica(other.index, listPath(token))
        t.equal(page.status, 200, `minted by replica ${minter.index}, accepted by replica ${other.index}`)
      }
    }
  })

  await t.test('refresh on one replica, use on another', async (t) => {
    await cluster.addUser('refresh-user', 'refresh-password')
    const { refresh_token: refreshToken } = await cluster.login('refresh-user', 'refresh-password', 0)
    for (const refresher of replicas) {
      const refreshed = await cluster.requestReplica(refresher.index, '/api/auth/refresh', { form: { refresh_token: refreshToken } })
      t.equal(refreshed.status, 200, `refresh token minted by replica 0 accepted by replica ${refresher.index}`)
      const { access_token: token } = refreshed.json()
      for (const user of replicas) {
        t.equal((await cluster.requestReplica(user.index, listPath(token))).status, 200,
          `access token refreshed on replica ${refresher.index}, used on replica ${user.index}`)
      }
    }
  })

  /**
   * Logs in, uses the tokens on every replica (so every cache holds them), runs `revoke` and
   * measures when each replica refuses the access token, from the moment `revoke` is done; then
   * checks that each refuses the refresh token too. The tokens, for more checks.
   */
  async function revocationDelays (t: Test, username: string, password: string, what: string, revoke: (pair: { access_token: string, refresh_token: string }) => Promise<string>) {
    const pair = await cluster.login(username, password)
    for (const replica of replicas) {
      t.equal((await cluster.requestReplica(replica.index, listPath(pair.access_token))).status, 200, `replica ${replica.index} accepts the token before`)
      t.equal((await cluster.requestReplica(replica.index, '/api/auth/refresh', { form: { refresh_token: pair.refresh_token } })).status, 200, 'and the refresh token')
    }
    const refusals = replicas.map(async (replica) => await firstRefusal(cluster, replica.index, pair.access_token, 10_000))
    const detail = await revoke(pair)
    const revokedAt = performance.now()
    const delays = (await Promise.all(refusals)).map((at) => Math.max(0, at - revokedAt))
    t.comment(`${what}: refused by ${delays.map((ms, index) => `replica ${index} ${ms.toFixed(0)} ms`).join(', ')} after it was done (${detail})`)
    for (const [index, ms] of delays.entries()) t.ok(ms <= REVOCATION_BOUND_MS, `replica ${index} refused it within 1 s (${ms.toFixed(0)} ms)`)
    for (const replica of replicas) {
      const refreshed = await cluster.requestReplica(replica.index, '/api/auth/refresh', { form: { refresh_token: pair.refresh_token } })
      t.equal(refreshed.status, 400, `replica ${replica.index} refuses the refresh token too`)
    }
    return pair
  }

  /** `revocationDelays` for a CLI command, measured from its exit. */
  async function cliRevocationDelays (t: Test, username: string, password: string, revoke: string[], input: string) {
    await revocationDelays(t, username, password, revoke.slice(0, 2).join(' '), async () => {
      const revoked = await cluster.cli(revoke, input)
      t.equal(revoked.code, 0, revoked.stderr)
      return `the CLI took ${revoked.ms.toFixed(0)} ms`
    })
  }

  /** Both replicas answer the session's refresh and access tokens as `expected`. */
  async function sessionAnswers (t: Test, pair: { access_token: string, refresh_token: string }, expected: [number, number], what: string) {
    for (const replica of replicas) {
      const refreshed = await cluster.requestReplica(replica.index, '/api/auth/refresh', { form: { refresh_token: pair.refresh_token } })
      const listed = await cluster.requestReplica(replica.index, listPath(pair.access_token))
      t.same([refreshed.status, listed.status], expected, `replica ${replica.index}: ${what}`)
    }
  }

  await t.test('a logout through the balancer is refused by every replica within 1 s; the user\'s other session goes on', async (t) => {
    await cluster.addUser('logout-user', 'logout-password')
    const other = await cluster.login('logout-user', 'logout-password', 1)
    await sessionAnswers(t, other, [200, 200], 'the other session works before')
    await revocationDelays(t, 'logout-user', 'logout-password', 'logout through nginx', async (pair) => {
      const answer = await cluster.request('/api/auth/logout', { form: { refresh_token: pair.refresh_token } })
      t.same([answer.status, answer.json()], [200, { status: 'ok' }], 'logout answers 200')
      return `the logout took ${answer.ms.toFixed(0)} ms`
    })
    await sessionAnswers(t, other, [200, 200], 'the other session goes on')
  })

  await t.test('meridian user logout is refused by every replica within 1 s', async (t) => {
    await cluster.addUser('operator-logout-user', 'operator-password')
    await cliRevocationDelays(t, 'operator-logout-user', 'operator-password', ['user', 'logout', 'operator-logout-user'], '')
    t.equal((await cluster.request('/api/auth/login', { form: { username: 'operator-logout-user', password: 'operator-password' } })).status, 200, 'the password still logs in')
  })

  await t.test('a password change made with the CLI is refused by every replica within 1 s', async (t) => {
    await cluster.addUser('passwd-user', 'old-password')
    await cliRevocationDelays(t, 'passwd-user', 'old-password', ['user', 'passwd', 'passwd-user'], 'new-password\n')
    for (const replica of replicas) {
      const oldPassword = await cluster.requestReplica(replica.index, '/api/auth/login', { form: { username: 'passwd-user', password: 'old-password' } })
      t.equal(oldPassword.status, 403, `replica ${replica.index} refuses the old password`)
    }
    t.equal((await cluster.request('/api/auth/login', { form: { username: 'passwd-user', password: 'new-password' } })).status, 200, 'the new password logs in')
  })

  await t.test('a removal made with the CLI is refused by every replica within 1 s', async (t) => {
    await cluster.addUser('removed-user', 'removed-password')
    await cliRevocationDelays(t, 'removed-user', 'removed-password', ['user', 'remove', 'removed-user'], '')
    for (const replica of replicas) {
      const login = await cluster.requestReplica(replica.index, '/api/auth/login', { form: { username: 'removed-user', password: 'removed-password' } })
      t.equal(login.status, 403, `replica ${replica.index} no longer logs the user in`)
    }
  })

  await t.test('failed logins for one username are counted across replicas', async (t) => {
    await cluster.addUser('guessed-user', 'guessed-password')
    // Its own client address, so the per-address count of the other tests is untouched.
    const from = cluster.otherClientAddresses[0] as string
    const attempt = async (index: number, password: string) =>
      await cluster.requestReplica(index, '/api/auth/login', { from, form: { username: 'guessed-user', password } })
    const statuses: number[] = []
    let throttled
    for (let n = 0; n < 10; n++) {
      const answer = await attempt(n % replicas.length, `wrong-${n}`)
      statuses.push(answer.status)
      if (answer.status === 429) { throttled = answer; break }
    }
    t.comment(`per username, alternating replicas: ${statuses.join(' ')}`)
    t.same(statuses, [403, 403, 403, 403, 403, 429], 'five failures spread over the replicas, then 429 (the limit is 5 per username)')
    t.match(throttled?.headers['retry-after'], /^\d+$/, 'with Retry-After')
    t.same(throttled?.json(), { error: { code: 429, message: 'Too many requests' } })
    for (const replica of replicas) {
      t.equal((await attempt(replica.index, 'guessed-password')).status, 429, `replica ${replica.index} throttles even the right password`)
    }
  })

  await t.test('failed logins per client address are counted through the balancer, whatever X-Forwarded-For the client sends', async (t) => {
    await throttlesPerClientAddress(t, cluster)
  })

  await t.test('online seen by one replica shows in a list served by another', async (t) => {
    await cluster.addUser('online-user', 'online-password')
    await cluster.addUser('observer', 'observer-password')
    const { access_token: observerToken } = await cluster.login('observer', 'observer-password', 1)
    const onlineOnReplica1 = async () => {
      const page = await cluster.requestReplica(1, listPath(observerToken))
      if (page.status !== 200) throw new Error(`replica 1 answered ${page.status}: ${page.body}`)
      const user = (page.json().data as Array<{ name: string, online: boolean }>).find((u) => u.name === 'online-user')
      if (user === undefined) throw new Error('online-user is not listed')
      return user.online
    }
    t.equal(await onlineOnReplica1(), false, 'a user never seen is offline')
    await cluster.login('online-user', 'online-password', 0)
    const seenAt = performance.now()
    let online = await onlineOnReplica1()
    while (!online && performance.now() - seenAt < ONLINE_BOUND_MS) {
      await sleep(50)
      online = await onlineOnReplica1()
    }
    const delay = performance.now() - seenAt
    t.comment(`online after a login on replica 0: shown by replica 1 after ${delay.toFixed(0)} ms`)
    t.ok(online, `replica 1 lists the user online within ${ONLINE_BOUND_MS} ms`)
  })

  await t.test('a replica that lost its database is routed around: no request that needs one fails through nginx (#59)', async (t) => {
    await cluster.addUser('failover-user', 'failover-password')
    const { access_token: token } = await cluster.login('failover-user', 'failover-password')
    replica0Database.cut()
    t.teardown(() => { replica0Database.restore() })
    // Until the replica itself says so: its pool sees the cut at its next query.
    const deadline = performance.now() + 30_000
    let direct = await cluster.requestReplica(0, listPath(token))
    while (direct.status !== 503 && performance.now() < deadline) {
      await sleep(50)
      direct = await cluster.requestReplica(0, `/api/user/list?per_page=100&page=${1 + Math.floor(Math.random() * 1000)}&access_token=${encodeURIComponent(token)}`)
    }
    t.equal(direct.status, 503, `replica 0 answers 503 straight (${direct.body})`)
    const statuses = new Map<number, number>()
    for (let n = 0; n < 60; n++) {
      const answer = n % 3 === 2
        ? await cluster.request('/api/auth/login', { form: { username: 'failover-user', password: 'failover-password' } })
        : await cluster.request(`/api/user/list?per_page=10&page=${1 + (n % 5)}&access_token=${encodeURIComponent(token)}`)
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    }
    t.same([...statuses.entries()], [[200, 60]], 'through nginx, 40 lists and 20 logins: every one answered 200')
    const retried = balancerLog(cluster).filter((line) => /upstream_status=503, 200/.test(line))
    t.ok(retried.length > 0, `nginx retried a 503 on the other replica (${retried.length} times)`)
    t.equal((await cluster.request('/api/date/suninfo?timestamp=0&latitude=0&longitude=0')).status, 200, 'routes without a database are served as before')

    replica0Database.restore()
    let back = await cluster.requestReplica(0, '/health/ready')
    while (back.status !== 200 && performance.now() < deadline + 30_000) {
      await sleep(100)
      back = await cluster.requestReplica(0, '/health/ready')
    }
    t.equal(back.status, 200, 'and it serves again once its database is back')
  })

  await t.test('with Redis away, logins answer 503 and nginx still serves list and refresh from every replica (#59)', async (t) => {
    const { access_token: token, refresh_token: refreshToken } = await cluster.login('failover-user', 'failover-password')
    redisProxy.cut()
    t.teardown(() => { redisProxy.restore() })
    const statuses: Record<string, number[]> = { login: [], list: [], refresh: [] }
    for (let n = 0; n < 30; n++) {
      statuses.login!.push((await cluster.request('/api/auth/login', { form: { username: 'failover-user', password: 'failover-password' } })).status)
      statuses.list!.push((await cluster.request(listPath(token))).status)
      statuses.refresh!.push((await cluster.request('/api/auth/refresh', { form: { refresh_token: refreshToken } })).status)
    }
    t.same([...new Set(statuses.login)], [503], 'no login without the failed-login counter')
    t.same([...new Set(statuses.list)], [200], 'every list answered: the logins\' 503s bench no replica')
    t.same([...new Set(statuses.refresh)], [200], 'every refresh answered')
    redisProxy.restore()
  })

  await t.test('with every replica stopped, the balancer answers 503 with the error body', async (t) => {
    for (const replica of replicas) {
      const exit = await cluster.stopReplica(replica.index)
      t.same([exit.code, exit.signal], [0, null], `replica ${replica.index} exits 0 on SIGTERM (${exit.ms.toFixed(0)} ms)`)
    }
    for (const path of ['/api/date/suninfo?timestamp=0&latitude=0&longitude=0', '/api/auth/login']) {
      const answer = await cluster.request(path, path.endsWith('login') ? { form: { username: 'u', password: 'p' } } : {})
      t.equal(answer.status, 503, path)
      t.match(answer.headers['content-type'], /^application\/json/)
      t.same(answer.json(), { error: { code: 503, message: 'Service unavailable' } })
      t.equal(answer.headers['x-content-type-options'], 'nosniff')
    }
  })

  t.comment(`cluster test took ${((performance.now() - started) / 1000).toFixed(1)} s`)
})

t.test('behind an nginx that appends to X-Forwarded-For, a spoofed entry does not escape the count either', { skip: clusterTestSkip }, async (t) => {
  const cluster = await startCluster(t, { nginxConfig: STOCK_NGINX_CONFIG })
  await throttlesPerClientAddress(t, cluster)

  // The negative control of the keep-alive count: the same count without `keepalive`.
  await t.test('without keepalive, nginx opens a connection per request, and the count shows it', async (t) => {
    const opened = await connectionsOpenedFor40Requests(t, cluster)
    t.ok(opened > KEEPALIVE_CONNECTIONS_BOUND, `more than the keep-alive bound of ${KEEPALIVE_CONNECTIONS_BOUND} (${opened})`)
    t.equal(opened, 40, 'one per request')
  })
})

/** Writes `request` as it is to `endpoint` and reads until the server closes (or 5 s pass): nginx's answer, raw. */
async function rawExchange (endpoint: { host: string, port: number }, request: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = connect(endpoint.port, endpoint.host, () => { socket.end(request) })
    const chunks: Buffer[] = []
    socket.setTimeout(5000, () => { socket.destroy() })
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('close', () => { resolve(Buffer.concat(chunks).toString('latin1')) })
    socket.on('error', reject)
  })
}
