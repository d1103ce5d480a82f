// `npm run dev:worker`'s first step: applies the D1 migrations to the local database and prints one
// line instead of wrangler's ~200 (it draws the migration table once per migration). On failure
// wrangler's whole output is shown, since then it is what matters.
//
// It is given wrangler dev's options (scripts/dev-worker.sh) and passes on those that name the
// database wrangler dev will open: the state folder, the config file and the environment.
import { spawn } from "node:child_process";

const SHARED_OPTIONS = new Set(["--persist-to", "--config", "-c", "--env", "-e"]);

/** The options among wrangler dev's that `d1 migrations apply` must see too (`--x v` or `--x=v`). */
function sharedOptions(args) {
  const picked = [];
  for (let i = 0; i < args.length; i++) {
    const [name] = args[i].split("=", 1);
    if (!SHARED_OPTIONS.has(name)) continue;
    if (args[i].includes("=")) picked.push(args[i]);
    else if (i + 1 < args.length) picked.push(args[i], args[++i]);
  }
  return picked;
}

const options = sharedOptions(process.argv.slice(2));
const child = spawn("wrangler", ["d1", "migrations", "apply", "DB", "--local", ...options], {
  env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
  stdio: ["ignore", "pipe", "pipe"],
});
let output = "";
child.stdout.on("data", (d) => (output += d));
child.stderr.on("data", (d) => (output += d));
child.on("error", (error) => {
  console.error(`d1 migrations: cannot run wrangler: ${error.message}`);
  process.exit(1);
});
child.on("close", (code) => {
  if (code !== 0) {
    process.stderr.write(output);
    console.error(`d1 migrations: wrangler exited with ${code}`);
    process.exit(code ?? 1);
  }
  // The last table has one row per applied migration, each marked ✅.
  const applied = new Set(output.match(/\d{4}_[\w-]+\.sql(?=\s*│\s*✅)/g) ?? []);
  console.log(
    applied.size > 0
      ? `d1 migrations (local): applied ${applied.size}: ${[...applied].join(", ")}`
      : "d1 migrations (local): up to date",
  );
});
