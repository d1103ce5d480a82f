// Makes sure the Debian programs the suite drives for real are present: Chromium (explorer and
// library pages), nginx (a stock proxy_cache in front of the service), faketime (an instance on a
// skewed clock), strace (the syscall work budget), Ceph (a one-node RGW cluster as the real S3) and podman
// (the container image).
// Installs the missing ones with apt when we may (root), otherwise says exactly what to run. One list, so each suite adds its line here.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** The file each suite starts → the Debian package that provides it. */
const NEEDED = [
  [process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", "chromium"],
  ["/usr/sbin/nginx", "nginx"],
  ["/usr/bin/faketime", "faketime"],
  ["/usr/bin/radosgw", "radosgw"],
  ["/usr/bin/ceph-mon", "ceph-mon"],
  ["/usr/bin/ceph-osd", "ceph-osd"],
  ["/usr/bin/ceph", "ceph-common"],
  // test/budget/syscall-budget.test.ts counts the server's syscalls per request (issue 36).
  ["/usr/bin/strace", "strace"],
  // test/container builds and runs the Containerfile (issue 42): podman with runc (crun refuses this
  // kind of machine's cgroups), and debootstrap for the base image when no registry is reachable.
  ["/usr/bin/podman", "podman"],
  ["/usr/sbin/runc", "runc"],
  ["/usr/sbin/debootstrap", "debootstrap"],
];

const missing = [...new Set(NEEDED.filter(([file]) => !existsSync(file)).map(([, pkg]) => pkg))];
if (missing.length > 0) {
  if (process.getuid?.() !== 0) {
    console.error(`the test suite needs: run  sudo apt-get update && sudo apt-get install -y ${missing.join(" ")}`);
    process.exit(1);
  }
  console.log(`installing Debian's ${missing.join(", ")} for the test suite (once) …`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
  execFileSync("apt-get", ["install", "-y", "-qq", ...missing], { stdio: ["ignore", "ignore", "inherit"], env });
}
