import type { FastifyCompressOptions } from '@fastify/compress'

/** Brotli (quality 4, not zlib's 11) or gzip past 1 KiB, for routes whose answers can be large (docs/decisions.md). */
export const COMPRESSED = { encodings: ['br', 'gzip'], threshold: 1024 } satisfies FastifyCompressOptions
