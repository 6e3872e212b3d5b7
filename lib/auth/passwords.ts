import argon2 from 'argon2'

/** OWASP's first argon2id choice; each hash stores its parameters, so they can be raised later. */
export const passwordHashOptions = {
  type: argon2.argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1
} as const

export async function hashPassword (password: string): Promise<string> {
  return await argon2.hash(password, passwordHashOptions)
}

/** False for a wrong password and for a hash that is not a valid argon2 string. */
export async function verifyPassword (hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password)
  } catch {
    return false
  }
}

export function needsRehash (hash: string): boolean {
  return argon2.needsRehash(hash, passwordHashOptions)
}

let dummyHash: Promise<string> | undefined

/** Makes the dummy hash ahead of the first login, so that login is not slower than the rest. */
export async function prepareDummyHash (): Promise<string> {
  dummyHash ??= hashPassword('meridian-dummy-password-for-unknown-users')
  return await dummyHash
}

/** An unknown username still costs a real hash's verification, so timing does not tell which usernames exist. */
export async function verifyAgainstDummy (password: string): Promise<false> {
  await verifyPassword(await prepareDummyHash(), password)
  return false
}
