/**
 * `cms login` state: the provider, client and tokens, cached in the user's config dir
 * ($XDG_CONFIG_HOME/cms or ~/.config/cms) with mode 0600 (private-files.ts), refreshed when the
 * access token expires.
 */
import { rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { requestToken, type TokenProvider, type TokenSet } from "../client/index.js";
import { readPrivateFile, writePrivateFile } from "./private-files.js";

export interface Session {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  accessToken: string;
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** The CLI's folder in the user's config dir: the login, and the locks it took (held-locks.ts). */
export const configDir = () => join(process.env.XDG_CONFIG_HOME || join(homedir(), ".config"), "cms");

export const sessionFile = () => join(configDir(), "session.json");

export async function saveSession(s: Session): Promise<string> {
  const file = sessionFile();
  await writePrivateFile(file, `${JSON.stringify(s, null, 2)}\n`);
  return file;
}

/** The saved login, or undefined (none, or not JSON); throws when the config folder is unsafe. */
export async function loadSession(): Promise<Session | undefined> {
  const text = await readPrivateFile(sessionFile());
  try {
    return text === undefined ? undefined : (JSON.parse(text) as Session);
  } catch {
    return undefined;
  }
}

export const deleteSession = () => rm(sessionFile(), { force: true });

/** A clock in the shape of the server's AppDeps["clock"]; tests pass one they move themselves. */
type Clock = () => Date;
const realTime: Clock = () => new Date();

export const sessionFrom = (
  issuer: string,
  clientId: string,
  clientSecret: string | undefined,
  set: TokenSet,
  clock: Clock = realTime,
): Session => ({
  issuer,
  clientId,
  ...(clientSecret ? { clientSecret } : {}),
  accessToken: set.access_token,
  ...(set.refresh_token ? { refreshToken: set.refresh_token } : {}),
  expiresAt: clock().getTime() + (set.expires_in ?? 300) * 1000,
});

/** CMS_TOKEN wins; else the cached login, refreshed (and saved) when it is about to expire on `clock`. */
export const sessionTokenAt =
  (clock: Clock = realTime): TokenProvider =>
  async () => {
    if (process.env.CMS_TOKEN) return process.env.CMS_TOKEN;
    const s = await loadSession();
    if (!s) return undefined;
    if (clock().getTime() < s.expiresAt - 30_000) return s.accessToken;
    if (!s.refreshToken) throw new Error("the saved login has expired; run `cms login` again");
    const client = { client_id: s.clientId, ...(s.clientSecret ? { client_secret: s.clientSecret } : {}) };
    const set = await requestToken(s.issuer, {
      ...client,
      grant_type: "refresh_token",
      refresh_token: s.refreshToken,
    }).catch(() => {
      throw new Error("the saved login has expired; run `cms login` again");
    });
    await saveSession(sessionFrom(s.issuer, s.clientId, s.clientSecret, set, clock));
    return set.access_token;
  };

export const sessionToken: TokenProvider = sessionTokenAt();
