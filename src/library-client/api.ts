/**
 * The API as the page calls it: same origin, with the user's token when auth is on; a problem+json
 * answer becomes an ApiError whose message names the problem and its offending fields.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

interface Problem {
  title?: string;
  detail?: string;
  code?: string;
  errors?: { pointer?: string; detail?: string }[];
}

async function problemOf(res: Response): Promise<ApiError> {
  const problem = (await res.json().catch(() => ({}))) as Problem;
  const fields = (problem.errors ?? []).map((e) => `${e.pointer ?? ""} ${e.detail ?? ""}`.trim());
  const text = [problem.detail ?? problem.title ?? `HTTP ${res.status}`, ...fields].join("; ");
  return new ApiError(res.status, text, problem.code);
}

export interface Api {
  prefix: string;
  /** Authorization headers for a request made outside `get`/`post` (tus, downloads). */
  headers(): Record<string, string>;
  signedIn: boolean;
  get<T>(path: string): Promise<T>;
  post<T>(verb: string, body: unknown): Promise<T>;
  /** A raw response of a GET that must succeed (for downloads). */
  fetch(path: string): Promise<Response>;
}

export function createApi(prefix: string, token: () => string | null): Api {
  const headers = (): Record<string, string> => {
    const value = token();
    return value ? { authorization: `Bearer ${value}` } : {};
  };
  async function send(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(`${prefix}/${path}`, { ...init, headers: { ...headers(), ...init.headers } });
    if (!res.ok) throw await problemOf(res);
    return res;
  }
  return {
    prefix,
    headers,
    get signedIn() {
      return token() !== null;
    },
    fetch: (path) => send(path),
    async get<T>(path: string) {
      return (await (await send(path)).json()) as T;
    },
    async post<T>(verb: string, body: unknown) {
      const res = await send(verb, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return (res.status === 204 ? null : await res.json()) as T;
    },
  };
}
