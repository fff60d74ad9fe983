import { WardrikError, isValidName } from "@wardrik/protocol";

/** Request header with which the admin token acts in another org (`wardrik ... org/name`). */
export const ORG_HEADER = "Wardrik-Org";

/**
 * The org a request acts in: the token's own, or with the admin token the one
 * named by `Wardrik-Org`. An org token may name only its own org; the answer
 * does not depend on whether the other org exists.
 */
export function requestOrg(who: { org: string; admin: boolean }, asked: string | undefined): string {
  if (asked === undefined || asked === who.org) return who.org;
  if (!isValidName(asked)) throw new WardrikError("bad_request", `${ORG_HEADER} must be an org name (1-55 letters, digits, _ or -).`);
  if (!who.admin) {
    throw new WardrikError(
      "unauthorized",
      `This token belongs to org ${who.org} and can only reach that org; use the admin token to reach org ${asked}.`,
      { status: 403 },
    );
  }
  return asked;
}
