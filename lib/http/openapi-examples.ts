interface MediaType { schema?: { $ref?: string }, example?: unknown, examples?: unknown }
interface Response { description?: string, content?: Record<string, MediaType> }
interface Operation { requestBody?: { content?: Record<string, MediaType> }, responses?: Record<string, Response> }
export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, { example?: unknown }> }
}

const ERROR_BODY_REF = '#/components/schemas/ErrorBody'

/** An example on every media type: @fastify/swagger drops all beside a `$ref`, so none would show otherwise. */
export function withOperationExamples<D extends OpenApiDocument> (document: D): D {
  const componentExample = (media: MediaType): unknown => {
    const name = media.schema?.$ref?.replace('#/components/schemas/', '')
    return name === undefined ? undefined : document.components?.schemas?.[name]?.example
  }
  const fill = (content: Record<string, MediaType> | undefined, example: (media: MediaType) => unknown): void => {
    for (const media of Object.values(content ?? {})) {
      if (media.example !== undefined || media.examples !== undefined) continue
      const value = example(media)
      if (value !== undefined) media.example = value
    }
  }
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      fill(operation.requestBody?.content, componentExample)
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        fill(response.content, (media) => media.schema?.$ref === ERROR_BODY_REF
          ? { error: { code: Number(status), message: response.description } }
          : componentExample(media))
      }
    }
  }
  return document
}
