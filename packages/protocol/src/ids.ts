/** Every durable object gets a prefixed ULID, so an ID says what it names. */
export const ID_PREFIXES = {
  agent: "agt_",
  conversation: "cnv_",
  run: "run_",
  call: "call_",
  event: "evt_",
  message: "msg_",
  token: "tok_",
  worker: "wkr_",
  delivery: "dlv_",
  firing: "fir_",
} as const;
export type IdKind = keyof typeof ID_PREFIXES;

const ULID = "[0-9A-HJKMNP-TV-Z]{26}";
const patterns = Object.fromEntries(
  Object.entries(ID_PREFIXES).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}${ULID}$`)]),
) as Record<IdKind, RegExp>;

export function isId(kind: IdKind, value: string): boolean {
  return patterns[kind].test(value);
}

/** Names of agents, tools and namespaces: 1-55 letters, digits, `_`, `-`. */
export const NAME_PATTERN = /^[A-Za-z0-9_-]{1,55}$/;
export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name);
}
