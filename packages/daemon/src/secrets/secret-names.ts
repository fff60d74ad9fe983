import type { SecretNames } from "@wardrik/protocol";

/** `GET /v1/secrets` and `wardrik secret ls --json`: every name, and the ones that cannot be decrypted with why. */
export function secretNames(list: readonly { name: string; error?: string }[]): SecretNames {
  return {
    secrets: list.map((s) => s.name),
    unreadable: list.flatMap((s) => (s.error === undefined ? [] : [{ name: s.name, error: s.error }])),
  };
}
