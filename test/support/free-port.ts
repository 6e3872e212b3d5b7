import { once } from 'node:events'
import { createServer } from 'node:net'

/** A port nothing listens on at `host` right now (the kernel's choice, released before it returns). */
export async function freePort (host = '127.0.0.1'): Promise<number> {
  const server = createServer()
  server.listen(0, host)
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}
