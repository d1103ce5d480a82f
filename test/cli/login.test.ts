/**
 * `cms login` / `cms logout` against the real dev IdP and the server with auth on: the password
 * grant's tokens are cached in $XDG_CONFIG_HOME/cms with mode 0600 and used by later commands.
 */
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AuthStack, CLIENT_SECRET, startAuthStack } from "../helpers/auth-stack.js";
import { BIN, runCms } from "./run-cms.js";

let stack: AuthStack;
let env: Record<string, string>;
const cms = (...args: string[]) => runCms(args, env, stack.app.dir);

beforeAll(async () => {
  stack = await startAuthStack({ CMS_LOG_LEVEL: "warn" });
  env = {
    CMS_URL: stack.app.baseUrl,
    XDG_CONFIG_HOME: join(stack.app.dir, "config"),
    CMS_ISSUER: stack.idp.issuer,
    CMS_CLIENT_SECRET: CLIENT_SECRET,
  };
});
afterAll(() => stack?.close());

it("logs in with the password grant, caches the token 0600, uses it, and logs out", async () => {
  await writeFile(join(stack.app.dir, "a.txt"), "auth");
  // Not logged in: refused, and told what to do (a large `put` likewise: test/cli/refusal-any-size.test.ts).
  const refused = await cms("ls", "--tenant", "acme");
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/^cms: 401 UNAUTHENTICATED: .* — run cms login\n$/);

  const wrong = await runCms(["login", "--username", "acme-creator"], { ...env, CMS_PASSWORD: "wrong" }, stack.app.dir);
  expect(wrong.code).toBe(1);
  expect(wrong.stderr).toMatch(/^cms: token request refused \(400\)/);

  const login = await runCms(
    ["login", "--username", "acme-creator"],
    { ...env, CMS_PASSWORD: "acme-creator" },
    stack.app.dir,
  );
  expect(login).toMatchObject({ code: 0, stderr: "" });
  const session = join(stack.app.dir, "config/cms/session.json");
  expect((await stat(session)).mode & 0o777).toBe(0o600);

  const put = await cms("put", "a.txt", "--tenant", "acme", "--json");
  expect(put.code).toBe(0);
  expect(JSON.parse(put.stdout)).toMatchObject({ size: 4 });

  expect((await cms("logout")).code).toBe(0);
  await expect(stat(session)).rejects.toThrow();
  expect((await cms("ls", "--tenant", "acme")).stderr).toMatch(/^cms: 401 UNAUTHENTICATED/);
});

it("asks for the password on a terminal, without echoing it; off a terminal says how to give one", async () => {
  // A real pseudo-terminal from util-linux `script`: the prompt is answered once it is shown, so
  // the typed password would be echoed by the terminal unless cms turned echo off first.
  const { spawn } = await import("node:child_process");
  const command = [process.execPath, BIN, "login", "--username", "acme-creator"].map((a) => `'${a}'`).join(" ");
  const child = spawn("script", ["-qefc", command, "/dev/null"], {
    cwd: stack.app.dir,
    env: { PATH: process.env.PATH ?? "", HOME: stack.app.dir, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  let answered = false;
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
    if (!answered && output.includes("Password: ")) {
      answered = true;
      child.stdin.write("acme-creator\r");
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  expect(output).toMatch(/Password: /);
  const afterPrompt = output.slice(output.indexOf("Password: ") + "Password: ".length);
  expect(afterPrompt).toMatch(/logged in as acme-creator/);
  expect(afterPrompt.slice(0, afterPrompt.indexOf("logged in as"))).not.toContain("acme-creator");
  expect(code).toBe(0);

  const piped = await runCms(["login", "--username", "acme-creator"], env, stack.app.dir);
  expect(piped.code).toBe(1);
  expect(piped.stderr).toMatch(/no password: pass --password, set CMS_PASSWORD, or run cms login on a terminal/);
  await cms("logout");
});
