import type { FastifyCompressOptions } from '@fastify/compress'

/**
 * How answers that can be large (a rendered document, a page of users, the OpenAPI document) are
 * compressed: brotli (at @fastify/compress's quality 4, not zlib's 11) when the client accepts it,
 * else gzip, past 1 KiB, on libuv's threads. A route opts in with `compress: COMPRESSED`. The sun
 * route does not: its answers are a few hundred bytes and carry an ETag (docs/decisions.md).
 */
export const COMPRESSED = { encodings: ['br', 'gzip'], threshold: 1024 } satisfies FastifyCompressOptions
