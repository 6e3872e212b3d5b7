import t from 'tap'
import { agesOn, isOnline, linkedPages, pageWindow, totalPages } from '../../../lib/users/listing.js'

t.test('agesOn counts whole years in UTC', async (t) => {
  const ageOn = (birthdate: string, today: Date): number => agesOn(today)(birthdate)
  t.equal(ageOn('1990-06-15', new Date('2020-06-14T23:59:59Z')), 29, 'the day before the birthday')
  t.equal(ageOn('1990-06-15', new Date('2020-06-15T00:00:00Z')), 30, 'on the birthday')
  t.equal(ageOn('2000-02-29', new Date('2023-02-28T12:00:00Z')), 22, 'a leapling waits for 1 March in common years')
  t.equal(ageOn('2000-02-29', new Date('2023-03-01T00:00:00Z')), 23)
  t.equal(ageOn('2000-02-29', new Date('2024-02-29T00:00:00Z')), 24)
  t.equal(ageOn('2020-12-31', new Date('2021-01-01T00:00:00Z')), 0)
})

t.test('isOnline compares the last activity with the window', async (t) => {
  t.equal(isOnline(0, 1_000_000, 300), false, 'never seen')
  t.equal(isOnline(1_000_000 - 300_000, 1_000_000, 300), true, 'exactly at the window edge')
  t.equal(isOnline(1_000_000 - 300_001, 1_000_000, 300), false)
})

t.test('page arithmetic', async (t) => {
  t.same(pageWindow(1, 20), { offset: 0, limit: 20 })
  t.same(pageWindow(3, 7), { offset: 14, limit: 7 })
  t.equal(totalPages(0, 20), 0)
  t.equal(totalPages(45, 20), 3)
  t.equal(totalPages(40, 20), 2)
})

t.test('linkedPages: first, last, and within 5 of the current page, without repeats', async (t) => {
  t.same(linkedPages(1, 0), [1], 'no users')
  t.same(linkedPages(1, 3), [1, 2, 3])
  t.same(linkedPages(50, 100), [1, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 100])
  t.same(linkedPages(98, 100), [1, 93, 94, 95, 96, 97, 98, 99, 100])
  t.same(linkedPages(500, 3), [1, 3], 'past the last page')
  t.ok(linkedPages(5000, 1_000_000).length <= 13, 'bounded whatever the number of pages')
})
