import { tradeSignInCode, whoAmI, type Session } from "./client/api";

/** The token lives in sessionStorage: it is gone when the tab closes, and other tabs never see it. */
const KEY = "wardrik.console.session";

export function loadSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(KEY);
    const s = raw === null ? undefined : (JSON.parse(raw) as Session);
    return s && typeof s.token === "string" && typeof s.org === "string" ? s : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(s: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(s));
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}

/** Checks a token with the daemon; the session acts in the token's own org. */
export async function signInWithToken(token: string): Promise<{ session: Session; orgs: string[] }> {
  const who = await whoAmI(token);
  return { session: { token, tokenOrg: who.org, admin: who.admin, org: who.org }, orgs: who.orgs };
}

/** Trades the code of a sign-in link (`wardrik console`) for the token it was made with. */
export async function signInWithCode(code: string): Promise<{ session: Session; orgs: string[] }> {
  return signInWithToken((await tradeSignInCode(code)).token);
}
