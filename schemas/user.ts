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

const exampleUsers = [
  {
    id: '3',
    name: 'Alan Liskov',
    birthdate: '1976-11-23',
    gender: 'non-binary',
    short_desc: 'Likes sailing.',
    age: 50,
    online: false
  },
  {
    id: '4',
    name: 'Katherine Johnson',
    birthdate: '1989-04-06',
    gender: 'unspecified',
    short_desc: 'Likes compilers.',
    age: 37,
    online: true
  }
]

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
}, {
  $id: 'UserPage',
  additionalProperties: false,
  // Page 2 of 50 demo users at per_page=2.
  examples: [{
    meta: { count_total: 50, count_loaded: 2, current_page: 2, total_pages: 25 },
    data: exampleUsers,
    links: [1, 2, 3, 4, 5, 6, 7, 25].map((page) =>
      page === 1 ? '/api/user/list?per_page=2' : `/api/user/list?page=${page}&per_page=2`)
  }]
})
