import { randomBytes } from 'node:crypto'
import type { NewUser, Database } from '../store/database.js'

const FIRST_NAMES = [
  'Ada', 'Grace', 'Alan', 'Katherine', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Radia', 'Hedy', 'Claude',
  'Margaret', 'John', 'Mary', 'Tim', 'Sophie', 'Dennis', 'Lynn', 'Niklaus', 'Shafi', 'Tony', 'Jean', 'Leslie',
  'Anita', 'Vint', 'Karen', 'Bjarne', 'Adele', 'Guido', 'Evelyn', 'Linus', 'Annie', 'Yukihiro', 'Ida', 'James'
]
const LAST_NAMES = [
  'Lovelace', 'Hopper', 'Turing', 'Johnson', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Perlman', 'Lamarr',
  'Shannon', 'Hamilton', 'McCarthy', 'Keller', 'Berners-Lee', 'Wilson', 'Ritchie', 'Conway', 'Wirth', 'Goldwasser',
  'Hoare', 'Bartik', 'Lamport', 'Borg', 'Cerf', 'Spärck Jones', 'Stroustrup', 'Goldberg', 'van Rossum', 'Boyd',
  'Torvalds', 'Easley', 'Matsumoto', 'Rhodes', 'Gosling'
]
const GENDERS = ['female', 'male', 'non-binary', 'unspecified']
const INTERESTS = [
  'astronomy', 'typography', 'sailing', 'compilers', 'gardening', 'chess', 'cartography', 'cycling', 'baking',
  'birdwatching', 'climbing', 'jazz', 'pottery', 'photography', 'running', 'origami', 'radio', 'poetry'
]
const ROLES = [
  'Engineer', 'Designer', 'Analyst', 'Teacher', 'Researcher', 'Nurse', 'Writer', 'Pilot', 'Architect', 'Chef'
]

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length] as T

/** The n-th seeded user of a run: plausible, varied and repeatable, aged 18 to 87, its username unique to the run. */
export function seedUser (n: number, run: string, passwordHash: string): NewUser {
  const mix = Math.imul(n + 1, 2654435761) >>> 0
  const first = pick(FIRST_NAMES, mix)
  const last = pick(LAST_NAMES, mix >>> 8)
  // Born 19 to 87 years before this year: aged 18 to 87 on any day of it.
  const year = new Date().getUTCFullYear() - 19 - (mix >>> 4) % 69
  const month = 1 + (mix >>> 12) % 12
  const day = 1 + (mix >>> 16) % 28
  return {
    username: `seed-${run}-${n}`,
    passwordHash,
    name: `${first} ${last}`,
    birthdate: `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
    gender: pick(GENDERS, mix >>> 20),
    shortDesc: `${pick(ROLES, mix >>> 3)} who likes ${pick(INTERESTS, mix >>> 6)} and ` +
      `${pick(INTERESTS, (mix >>> 10) + 1)}.`
  }
}

export interface SeedOptions {
  count: number
  /** One hash for every seeded user: hashing a million passwords would take days. */
  passwordHash: string
  /** Users per INSERT; each batch is one statement, so a failure leaves whole batches. */
  batchSize?: number
  onProgress?: (inserted: number) => void
}

/** Inserts `count` plausible users in batches; returns the run marker in their usernames. */
export async function seedUsers (store: Database, options: SeedOptions): Promise<string> {
  // 8 columns a row: 4,000 rows stay under SQLite's 32,766 and PostgreSQL's 65,535 parameters.
  const { count, passwordHash, batchSize = 4000, onProgress } = options
  const run = randomBytes(4).toString('hex')
  for (let start = 0; start < count; start += batchSize) {
    const batch = Array.from({ length: Math.min(batchSize, count - start) }, (_, i) =>
      seedUser(start + i, run, passwordHash))
    await store.addMany(batch)
    onProgress?.(start + batch.length)
  }
  return run
}
