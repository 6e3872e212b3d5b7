import t from 'tap'
import { seedUser } from '../../../lib/users/seed-users.js'
import { agesOn } from '../../../lib/users/listing.js'

t.test('seeded users are aged 18 to 87 on every day of the year they are seeded in', async (t) => {
  const year = new Date().getUTCFullYear()
  const users = Array.from({ length: 10_000 }, (_, n) => seedUser(n, 'test', 'not-a-hash'))
  const seen = new Set<number>()
  for (const day of [`${year}-01-01`, `${year}-06-30`, `${year}-12-31`]) {
    const ages = users.map((user) => agesOn(new Date(`${day}T12:00:00Z`))(user.birthdate))
    const [youngest, oldest] = [Math.min(...ages), Math.max(...ages)]
    t.ok(youngest >= 18 && oldest <= 87, `${day}: aged ${youngest} to ${oldest}`)
    for (const age of ages) seen.add(age)
  }
  t.same([Math.min(...seen), Math.max(...seen)], [18, 87], 'the whole range is used')
})
