import http from 'node:http'

export interface Endpoint { host: string, port: number }

export interface HttpAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
  /** Milliseconds from sending to the end of the body. */
  ms: number
  json: () => any
}

export interface RequestOptions {
  method?: string
  /** A form-encoded body (sets the method to POST unless given). */
  form?: Record<string, string>
  /** A JSON body (sets the method to POST unless given). */
  json?: unknown
  headers?: Record<string, string>
  /** The local address to send from; the cluster's client address by default. */
  from?: string
  /** An agent of the caller's (e.g. keep-alive for load), or false for a connection of its own; otherwise the cluster's keep-alive agent. */
  agent?: http.Agent | false
  timeoutMs?: number
}

/** Sends one request and reads the whole answer. Rejects on a network error or the timeout. */
export async function httpRequest (target: Endpoint, path: string, options: RequestOptions = {}): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | undefined
  if (options.form !== undefined) {
    body = new URLSearchParams(options.form).toString()
    headers['content-type'] ??= 'application/x-www-form-urlencoded'
  } else if (options.json !== undefined) {
    body = JSON.stringify(options.json)
    headers['content-type'] ??= 'application/json'
  }
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body))
  const method = options.method ?? (body === undefined ? 'GET' : 'POST')
  const started = performance.now()
  return await new Promise<HttpAnswer>((resolve, reject) => {
    const request = http.request({
      host: target.host,
      port: target.port,
      path,
      method,
      headers,
      ...(options.from !== undefined ? { localAddress: options.from } : {}),
      ...(options.agent !== undefined ? { agent: options.agent } : {}),
      timeout: options.timeoutMs ?? 10_000
    }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: text,
          ms: performance.now() - started,
          json: () => JSON.parse(text)
        })
      })
    })
    request.on('timeout', () => { request.destroy(new Error(`${method} ${path} on ${target.host}:${target.port}: no answer within ${options.timeoutMs ?? 10_000} ms`)) })
    request.on('error', reject)
    request.end(body)
  })
}
