import { hashPassword } from '../auth/passwords.js'
import type { NewUser, Database } from '../store/database.js'

export const DEMO_USERNAME = 'demo'
export const DEMO_PASSWORD = 'meridian-demo'
const DEMO_USER_COUNT = 50

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Katherine', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Radia']
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson']
const GENDERS = ['female', 'male', 'non-binary', 'unspecified']
const INTERESTS = ['astronomy', 'typography', 'sailing', 'compilers', 'gardening', 'chess', 'cartography']

function demoUser (i: number, passwordHash: string): NewUser {
  const first = FIRST_NAMES[i % FIRST_NAMES.length] as string
  const last = LAST_NAMES[(i * 7) % LAST_NAMES.length] as string
  const year = 1950 + ((i * 13) % 55)
  const month = 1 + ((i * 5) % 12)
  const day = 1 + ((i * 11) % 28)
  return {
    username: i === 0 ? DEMO_USERNAME : `${first}.${last}${i}`.toLowerCase(),
    passwordHash,
    name: i === 0 ? 'Demo User' : `${first} ${last}`,
    birthdate: `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
    gender: GENDERS[i % GENDERS.length] as string,
    shortDesc: `Likes ${INTERESTS[i % INTERESTS.length] as string}.`
  }
}

/** Fills an empty database with demo users sharing the demo password; returns how many it made. */
export async function ensureDemoUsers (store: Database): Promise<number> {
  if (await store.count() > 0) return 0
  // One hash for all: they share the published demo password, and each argon2 hash takes 19 MiB.
  const hash = await hashPassword(DEMO_PASSWORD)
  await store.addMany(Array.from({ length: DEMO_USER_COUNT }, (_, i) => demoUser(i, hash)))
  return DEMO_USER_COUNT
}
