import { once } from 'node:events'
import { connect, createServer, type Socket } from 'node:net'

/**
 * Resets a connection as a vanished server would. A half-closed socket is only destroyed:
 * resetAndDestroy() on one leaves Node 20's event loop spinning.
 */
function reset (socket: Socket): void {
  if (socket.readyState === 'open') socket.resetAndDestroy()
  else socket.destroy()
}

export type ProxyState = 'open' | 'cut' | 'blackhole'

/**
 * A TCP proxy that a test puts between the service and PostgreSQL or Redis to play an outage:
 * `cut()` resets every connection and refuses new ones (a server that went away), `blackhole()`
 * keeps connections but forwards nothing either way (a network that drops packets), `restore()`
 * forwards again.
 */
export class TcpProxy {
  private state: ProxyState = 'open'
  private readonly sockets = new Set<Socket>()
  private readonly server = createServer((client) => { this.accept(client) })

  private constructor (private readonly target: { host: string, port: number }) {}

  static async start (target: { host: string, port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target)
    proxy.server.listen(0, '127.0.0.1')
    await once(proxy.server, 'listening')
    return proxy
  }

  get port (): number { return (this.server.address() as { port: number }).port }

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
    const forward = (from: Socket, to: Socket) => {
      from.on('data', (chunk: Buffer) => { if (this.state === 'open') to.write(chunk) })
      from.on('end', () => { to.end() })
    }
    forward(client, upstream)
    forward(upstream, client)
  }

  cut (): void {
    this.state = 'cut'
    for (const socket of this.sockets) reset(socket)
  }

  blackhole (): void {
    this.state = 'blackhole'
  }

  /** Forwards again; connections made during a blackhole stay broken (bytes were lost). */
  restore (): void {
    if (this.state === 'blackhole') for (const socket of this.sockets) reset(socket)
    this.state = 'open'
  }

  async close (): Promise<void> {
    this.cut()
    this.server.close()
    await once(this.server, 'close')
  }
}
