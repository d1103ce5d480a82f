/**
 * The API as the page calls it: the typed client (src/client/, same origin) with the user's token
 * when auth is on; a problem answer becomes an ApiError whose message names the problem and its
 * offending fields, as the page shows it.
 */
import { CmsProblem, type CmsClient, createCmsClient, ok } from "../client/index.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The typed client's problem as the page shows it: its detail, then each offending field. */
function pageError(err: unknown): unknown {
  if (!(err instanceof CmsProblem)) return err;
  const { problem, status } = err;
  const fields = (problem.errors ?? []).map((e) => `${e.pointer ?? ""} ${e.detail ?? ""}`.trim());
  return new ApiError(
    status,
    [problem.detail ?? problem.title ?? `HTTP ${status}`, ...fields].join("; "),
    problem.code,
  );
}

/** openapi-fetch's answer to one operation (`client.api.GET/POST`). */
type Fetched<T> = Promise<{ data?: T; error?: unknown; response: Response }>;

export interface Api {
  prefix: string;
  /** Authorization headers for a request made outside the client (tus uploads). */
  headers(): Record<string, string>;
  signedIn: boolean;
  /** The typed client: every operation, typed from the served OpenAPI document. */
  client: CmsClient;
  /** A client method's answer (`api.call(api.client.queryResource(…))`), its problem as an ApiError. */
  call<T>(pending: Promise<T>): Promise<T>;
  /** An operation's data (`api.send(api.client.api.POST(…))`), its problem as an ApiError. */
  send<T>(fetched: Fetched<T>): Promise<T>;
  /** A raw response of a GET that must succeed (for downloads). */
  fetch(path: string): Promise<Response>;
}

export function createApi(prefix: string, token: () => string | null): Api {
  const headers = (): Record<string, string> => {
    const value = token();
    return value ? { authorization: `Bearer ${value}` } : {};
  };
  const client = createCmsClient({ baseUrl: location.origin, token: async () => token() ?? undefined });
  return {
    prefix,
    headers,
    client,
    get signedIn() {
      return token() !== null;
    },
    call: <T>(pending: Promise<T>) => pending.catch((err: unknown) => Promise.reject(pageError(err))),
    send: <T>(fetched: Fetched<T>) => ok(fetched).catch((err: unknown) => Promise.reject(pageError(err))),
    async fetch(path: string) {
      const res = await fetch(`${prefix}/${path}`, { headers: headers() });
      if (!res.ok) throw pageError(await CmsProblem.from(res));
      return res;
    },
  };
}
