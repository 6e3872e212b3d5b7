// Node's fetch types (from undici) name the body type of RequestInit but, unlike the DOM
// library, do not declare BodyInit globally; the fetch client that @hey-api/openapi-ts
// generates (test/generated/hey-api) refers to it.
type BodyInit = NonNullable<RequestInit['body']>
