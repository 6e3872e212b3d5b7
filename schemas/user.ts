import { Type } from '@sinclair/typebox'
import { Page, PerPage, ref } from './common.js'

export const User = Type.Object({
  id: Type.String({ pattern: '^[0-9]+$', description: 'Numeric id, as a string' }),
  name: Type.String(),
  birthdate: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' }),
  gender: Type.String(),
  short_desc: Type.String(),
  age: Type.Integer({ minimum: 0, description: 'Whole years from birthdate to today (UTC)' }),
  online: Type.Boolean({ description: 'Active within the last ONLINE_WINDOW seconds' })
}, { $id: 'User', additionalProperties: false })

export const UserListQuery = Type.Object({
  page: Type.Optional(Page),
  per_page: Type.Optional(PerPage)
})

export const UserPage = Type.Object({
  meta: Type.Object({
    count_total: Type.Integer({ minimum: 0 }),
    count_loaded: Type.Integer({ minimum: 0 }),
    current_page: Type.Integer({ minimum: 1 }),
    total_pages: Type.Integer({ minimum: 0 })
  }, { additionalProperties: false }),
  data: Type.Array(ref(User)),
  links: Type.Array(Type.String(), {
    description: 'Relative paths: the first page, the last, and every page within 5 of this one'
  })
}, { $id: 'UserPage', additionalProperties: false })
