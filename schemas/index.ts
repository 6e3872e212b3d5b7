import { ErrorBody, Status } from './common.js'
import { LoginRequest, RefreshRequest, TokenPair, AccessTokenGrant } from './auth.js'
import { User, UserPage } from './user.js'
import { SunInfo } from './sun.js'
import { MarkdownRequest, MarkdownHtml } from './markdown.js'

/** Every schema with an `$id`: registered once, referenced by routes, named in OpenAPI. */
export const namedSchemas = [
  ErrorBody, Status,
  LoginRequest, RefreshRequest, TokenPair, AccessTokenGrant,
  User, UserPage,
  SunInfo,
  MarkdownRequest, MarkdownHtml
]
