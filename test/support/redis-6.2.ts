import { once } from 'node:events'
import { connect, createServer, type Socket } from 'node:net'

/** Commands Redis 7.0 added: Redis 6.2 does not know them. */
const ADDED_IN_7_0 = new Set(['blmpop', 'bzmpop', 'eval_ro', 'evalsha_ro', 'expiretime', 'fcall', 'fcall_ro', 'function',
  'lcs', 'lmpop', 'pexpiretime', 'sintercard', 'sort_ro', 'spublish', 'ssubscribe', 'sunsubscribe', 'zintercard', 'zmpop'])

/** Commands whose options (NX, XX, GT, LT) came with 7.0: in 6.2 each takes exactly a key and a time. */
const FIXED_ARITY_IN_6_2: Readonly<Record<string, number>> = { expire: 3, pexpire: 3, expireat: 3, pexpireat: 3 }

/** Where the RESP2 value that starts at `start` ends, or -1 while it has not all arrived. */
function endOfValue (buffer: Buffer, start: number): number {
  if (start >= buffer.length) return -1
  const lineEnd = buffer.indexOf('\r\n', start)
  if (lineEnd === -1) return -1
  const type = String.fromCharCode(buffer[start] ?? 0)
  if (type === '+' || type === '-' || type === ':') return lineEnd + 2
  const length = Number(buffer.toString('latin1', start + 1, lineEnd))
  if (type === '$') {
    const end = length < 0 ? lineEnd + 2 : lineEnd + 2 + length + 2
    return end <= buffer.length ? end : -1
  }
  if (type !== '*') throw new Error(`not RESP2: ${buffer.toString('latin1', start, lineEnd)}`)
  let position = lineEnd + 2
  for (let i = 0; i < length && position !== -1; i++) position = endOfValue(buffer, position)
  return position
}

/** The arguments of a command (a RESP array of bulk strings, as every client sends them). */
function commandArguments (command: Buffer): string[] {
  const args: string[] = []
  let position = command.indexOf('\r\n') + 2
  while (position < command.length) {
    const lineEnd = command.indexOf('\r\n', position)
    const length = Number(command.toString('latin1', position + 1, lineEnd))
    args.push(command.toString('utf8', lineEnd + 2, lineEnd + 2 + length))
    position = lineEnd + 2 + length + 2
  }
  return args
}

/** The error Redis 6.2 answers to a command it lacks, in its words (src/server.c, processCommand), or none. */
export function redis62Refusal (args: readonly string[]): string | undefined {
  const name = (args[0] ?? '').toLowerCase()
  if (ADDED_IN_7_0.has(name)) {
    let shown = ''
    for (let i = 1; i < args.length && shown.length < 128; i++) shown += `\`${(args[i] ?? '').slice(0, 128 - shown.length)}\`, `
    return `ERR unknown command \`${args[0] ?? ''}\`, with args beginning with: ${shown}`
  }
  const arity = FIXED_ARITY_IN_6_2[name]
  if (arity !== undefined && args.length !== arity) return `ERR wrong number of arguments for '${name}' command`
  return undefined
}

const EXEC_ABORT = '-EXECABORT Transaction discarded because of previous errors.\r\n'

/** What the client is owed, in the order it asked. */
type Owed = { kind: 'forwarded', replaceWith?: string } | { kind: 'refused', reply: string }

/**
 * A stand-in for Redis 6.2 in front of a newer Redis: a TCP proxy that answers a command 6.2
 * lacks (a 7.0 command, `PEXPIRE … NX`) itself, with the error 6.2 gives, and forwards the rest.
 * Replies keep the order of the commands, and a transaction with a refused command fails at EXEC
 * with EXECABORT, as on 6.2. (Commands a Lua script runs are not seen: scripts must keep to
 * 6.2's commands by review.)
 */
export class Redis62StandIn {
  /** Every refusal it answered, for a test to show what the client sent. */
  readonly refused: string[] = []
  private readonly sockets = new Set<Socket>()
  private readonly server = createServer((client) => { this.accept(client) })

  private constructor (private readonly target: { host: string, port: number }) {}

  static async start (targetUrl: string): Promise<Redis62StandIn> {
    const url = new URL(targetUrl)
    const standIn = new Redis62StandIn({ host: url.hostname, port: Number(url.port === '' ? 6379 : url.port) })
    standIn.server.listen(0, '127.0.0.1')
    await once(standIn.server, 'listening')
    return standIn
  }

  get url (): string { return `redis://127.0.0.1:${(this.server.address() as { port: number }).port}` }

  private accept (client: Socket): void {
    const upstream = connect(this.target.port, this.target.host)
    for (const socket of [client, upstream]) {
      this.sockets.add(socket)
      socket.on('close', () => { this.sockets.delete(socket) })
      socket.on('error', () => { client.destroy(); upstream.destroy() })
    }
    client.on('end', () => { upstream.end() })
    upstream.on('end', () => { client.end() })

    const owed: Owed[] = []
    let inTransaction = false
    let transactionRefused = false
    const payRefusals = (): void => {
      for (let next = owed[0]; next?.kind === 'refused'; next = owed[0]) {
        owed.shift()
        client.write(next.reply)
      }
    }

    let fromClient = Buffer.alloc(0)
    client.on('data', (chunk: Buffer) => {
      fromClient = Buffer.concat([fromClient, chunk])
      let end: number
      while ((end = endOfValue(fromClient, 0)) !== -1) {
        let command = fromClient.subarray(0, end)
        fromClient = fromClient.subarray(end)
        const args = commandArguments(command)
        const name = (args[0] ?? '').toLowerCase()
        const refusal = redis62Refusal(args)
        if (refusal !== undefined) {
          this.refused.push(refusal)
          if (inTransaction) transactionRefused = true
          owed.push({ kind: 'refused', reply: `-${refusal}\r\n` })
          continue
        }
        let replaceWith: string | undefined
        if (name === 'multi') inTransaction = true
        if ((name === 'exec' || name === 'discard') && inTransaction) {
          if (name === 'exec' && transactionRefused) {
            // The server queued the rest: drop it, and answer as 6.2 answers such an EXEC.
            command = Buffer.from('*1\r\n$7\r\nDISCARD\r\n')
            replaceWith = EXEC_ABORT
          }
          inTransaction = false
          transactionRefused = false
        }
        owed.push({ kind: 'forwarded', ...(replaceWith !== undefined ? { replaceWith } : {}) })
        upstream.write(command)
      }
      payRefusals()
    })

    let fromServer = Buffer.alloc(0)
    upstream.on('data', (chunk: Buffer) => {
      fromServer = Buffer.concat([fromServer, chunk])
      let end: number
      while ((end = endOfValue(fromServer, 0)) !== -1) {
        const reply = fromServer.subarray(0, end)
        fromServer = fromServer.subarray(end)
        const forwarded = owed.shift()
        if (forwarded?.kind !== 'forwarded') throw new Error('a reply the stand-in did not expect')
        client.write(forwarded.replaceWith ?? reply)
        payRefusals()
      }
    })
  }

  async close (): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    this.server.close()
    await once(this.server, 'close')
  }
}
