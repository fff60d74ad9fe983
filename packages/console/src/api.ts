/**
 * The console's HTTP client. It uses only the public API under /v1/, with
 * the signed-in token, so anything the console does a script can do too.
 * Paths are relative: the page may be served under a proxy's path.
 */

export interface Session {
  token: string;
  /** The org the token belongs to. */
  tokenOrg: string;
  admin: boolean;
  /** The org the console acts in: the token's own, or (admin token) the one picked. */
  org: string;
}

/** An answer that was not a success, with the API's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class Api {
  constructor(
    readonly session: Session,
    private readonly onUnauthorized: () => void = () => undefined,
  ) {}

  /** The headers every request carries: the token, and the org for the admin token acting in another. */
  headers(): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${this.session.token}` };
    if (this.session.admin && this.session.org !== this.session.tokenOrg) h["wardrik-org"] = this.session.org;
    return h;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await send(path, {
      method,
      headers: { ...this.headers(), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status === 401) this.onUnauthorized();
    return readAnswer<T>(res);
  }
}

/** fetch, with "no answer at all" as an ApiError that says so. */
export async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw new ApiError(0, "unavailable", "The daemon did not answer. Is it running?");
  }
}

export async function readAnswer<T>(res: Response): Promise<T> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const err = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(res.status, err?.code ?? "error", err?.message ?? `The daemon answered ${res.status} ${res.statusText}.`);
  }
  return json as T;
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Every page of a cursor-paged list. */
export async function allPages<P, T>(api: Api, first: string, items: (page: P) => T[], next: (page: P) => string | null): Promise<T[]> {
  const out: T[] = [];
  let path: string | null = first;
  while (path !== null) {
    const page: P = await api.get<P>(path);
    out.push(...items(page));
    const cursor = next(page);
    path = cursor === null ? null : `${first}${first.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`;
  }
  return out;
}
