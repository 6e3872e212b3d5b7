import { once } from 'node:events'
import { connect, createServer, type Socket } from 'node:net'
import type { Test } from 'tap'

/**
 * Resets a connection as a vanished server would. A half-closed socket is only destroyed:
 * resetAndDestroy() on one leaves Node 20's event loop spinning.
 */
function reset (socket: Socket): void {
  if (socket.readyState === 'open') socket.resetAndDestroy()
  else socket.destroy()
}

export type ProxyState = 'open' | 'cut' | 'blackhole' | 'stall'

/**
 * A TCP proxy that a test puts between the service and PostgreSQL or Redis to play an outage:
 * `cut()` resets every connection and refuses new ones (a server that went away), `blackhole()`
 * keeps connections but forwards nothing either way (a network that drops packets), `stall()`
 * forwards requests but holds the answers (a server that runs commands and is slow to reply),
 * `restore()` forwards again.
 */
export class TcpProxy {
  private state: ProxyState = 'open'
  private readonly sockets = new Set<Socket>()
  /** Per client connection, what a stall held back from the server, in order (null: the server ended). */
  private readonly heldAnswers = new Map<Socket, Array<Buffer | null>>()
  private readonly server = createServer((client) => { this.accept(client) })

  private constructor (private readonly target: { host: string, port: number }) {}

  static async start (target: { host: string, port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target)
    proxy.server.listen(0, '127.0.0.1')
    await once(proxy.server, 'listening')
    return proxy
  }

  get port (): number { return (this.server.address() as { port: number }).port }

  /** Client connections open through it now. */
  get openConnections (): number { return this.heldAnswers.size }

  /** Where to connect to reach the target through it. */
  get endpoint (): { host: string, port: number } { return { host: '127.0.0.1', port: this.port } }

  private accept (client: Socket): void {
    if (this.state === 'cut') {
      client.resetAndDestroy()
      return
    }
    const upstream = connect(this.target.port, this.target.host)
    for (const socket of [client, upstream]) {
      this.sockets.add(socket)
      socket.on('close', () => { this.sockets.delete(socket) })
      socket.on('error', () => { client.destroy(); upstream.destroy() })
    }
    const held: Array<Buffer | null> = []
    this.heldAnswers.set(client, held)
    client.on('close', () => { this.heldAnswers.delete(client) })
    client.on('data', (chunk: Buffer) => { if (this.state === 'open' || this.state === 'stall') upstream.write(chunk) })
    client.on('end', () => { upstream.end() })
    upstream.on('data', (chunk: Buffer) => {
      if (this.state === 'open') client.write(chunk)
      else if (this.state === 'stall') held.push(chunk)
    })
    upstream.on('end', () => {
      if (this.state === 'stall') held.push(null)
      else client.end()
    })
  }

  cut (): void {
    this.state = 'cut'
    for (const socket of this.sockets) reset(socket)
  }

  blackhole (): void {
    this.state = 'blackhole'
  }

  stall (): void {
    this.state = 'stall'
  }

  /**
   * Forwards again: after a stall, first the answers it held, in order; connections made during
   * a blackhole stay broken (bytes were lost).
   */
  restore (): void {
    if (this.state === 'blackhole') for (const socket of this.sockets) reset(socket)
    if (this.state === 'stall') {
      for (const [client, held] of this.heldAnswers) {
        for (const chunk of held.splice(0)) {
          if (chunk === null) client.end()
          else client.write(chunk)
        }
      }
    }
    this.state = 'open'
  }

  async close (): Promise<void> {
    this.cut()
    this.server.close()
    await once(this.server, 'close')
  }
}

/** A TCP proxy in front of the server of a `redis:` or `postgres:` URL, closed when the test ends. */
export async function proxyInFrontOf (t: Test, serverUrl: string): Promise<TcpProxy> {
  const target = new URL(serverUrl)
  const defaultPort = target.protocol.startsWith('redis') ? 6379 : 5432
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port === '' ? defaultPort : target.port) })
  t.teardown(async () => { await proxy.close() })
  return proxy
}

/** A TCP proxy in front of `redisUrl`, closed when the test ends, and the URL through it. */
export async function redisBehindProxy (t: Test, redisUrl: string): Promise<{ proxy: TcpProxy, url: string }> {
  const proxy = await proxyInFrontOf(t, redisUrl)
  const url = new URL(redisUrl)
  url.hostname = '127.0.0.1'
  url.port = String(proxy.port)
  return { proxy, url: url.toString() }
}
