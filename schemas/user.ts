import { Type } from '@sinclair/typebox'
import { Int32, Int64, Page, PerPage, ref } from './common.js'

export const User = Type.Object({
  id: Type.String({ pattern: '^[0-9]+$', description: 'Numeric id, as a string' }),
  name: Type.String(),
  birthdate: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' }),
  gender: Type.String(),
  short_desc: Type.String(),
  age: Int32({ minimum: 0, description: 'Whole years from birthdate to today (UTC)' }),
  online: Type.Boolean({ description: 'Active within the last ONLINE_WINDOW seconds' })
}, { $id: 'User', additionalProperties: false })

export const UserListQuery = Type.Object({
  page: Type.Optional(Page),
  per_page: Type.Optional(PerPage)
})

export const UserPage = Type.Object({
  meta: Type.Object({
    count_total: Int64({ minimum: 0 }),
    count_loaded: Int32({ minimum: 0 }),
    current_page: Int64({ minimum: 1 }),
    total_pages: Int64({ minimum: 0 })
  }, { additionalProperties: false }),
  data: Type.Array(ref(User)),
  links: Type.Array(Type.String(), {
    description: 'Relative paths: the first page, the last, and every page within 5 of this one'
  })
}, { $id: 'UserPage', additionalProperties: false })
